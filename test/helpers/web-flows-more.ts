// More flows real clients follow, each sending back a value the server issued
// (test/helpers/web-flows.ts has the first ones, and the same FlowsApp shape):
// a Socket.IO-style session (Engine.IO's `0{"sid":…}` handshake, `?sid=`
// polls, POSTed packets, then the upgrade) whose `42[...]` event packets carry
// an order id the client sends back in a later packet; a chain of three 302s,
// each Location with a fresh token, the last setting a session cookie; a SOAP
// answer's OrderId sent back in the next request's XML body; a CSV export
// whose first line names the job the client then polls; a 202 Accepted with
// Retry-After and Operation-Location polled until done; and (an h2c server of
// its own) a JSON create then a read of the id on the same HTTP/2 connection.
// Every issued value is random, so one sent to another build is refused.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Client } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { bodyServer, closeHttpAndWs } from './servers.js';
import { flowsCall, type FlowsApp } from './web-flows.js';

const rand = () => randomBytes(9).toString('base64url');

/** Starts one build of the HTTP/1.1 flows; the `new` build calls an order's status `active`, not `open`. */
export async function startMoreFlowsApp(build: 'old' | 'new' = 'old'): Promise<FlowsApp> {
  const log: string[] = [];
  const refused: string[] = [];
  const status = build === 'new' ? 'active' : 'open';
  const orders = new Set<string>();
  const sessions = new Map<string, string[]>();
  const redirects = new Map<string, string>();
  const cookies = new Set<string>();
  const jobs = new Set<string>();
  const operations = new Map<string, number>();
  const order = () => {
    const id = `ord_${rand()}`;
    orders.add(id);
    return id;
  };
  // Engine.IO: an event packet `42["name",data]` answered by one queued for the next poll.
  const onEvent = (queue: string[], packet: string) => {
    const [name, data] = JSON.parse(packet.slice(2)) as [string, { orderId?: string }];
    if (name === 'create') return queue.push(`42${JSON.stringify(['created', { orderId: order() }])}`);
    if (orders.has(data.orderId ?? '')) return queue.push(`42${JSON.stringify(['order', { orderId: data.orderId, status }])}`);
    refused.push(`EVENT ${name} unknown order`);
    queue.push(`42${JSON.stringify(['error', 'unknown order'])}`);
  };
  const server = bodyServer((req, res, bytes, url) => {
    const body = bytes.toString('utf8');
    const send = (code: number, type: string | undefined, text: string | undefined, headers: Record<string, string> = {}) => {
      const line = `${req.method} ${url.pathname} ${code}`;
      log.push(line);
      if (code >= 400) refused.push(line);
      res.writeHead(code, { ...(type === undefined ? {} : { 'content-type': type }), ...headers }).end(text);
    };
    const json = (code: number, v: unknown, headers: Record<string, string> = {}) => send(code, 'application/json', JSON.stringify(v), headers);
    const p = url.pathname;
    if (p === '/socket.io/') {
      const sid = url.searchParams.get('sid');
      if (sid === null) {
        // Engine.IO's sids, as Socket.IO's, are 20 characters (15 random bytes).
        const made = randomBytes(15).toString('base64url');
        sessions.set(made, []);
        return send(200, 'text/plain; charset=UTF-8', `0${JSON.stringify({ sid: made, upgrades: ['websocket'], pingInterval: 25000, pingTimeout: 20000, maxPayload: 1000000 })}`);
      }
      const queue = sessions.get(sid);
      if (queue === undefined) return json(400, { code: 1, message: 'Session ID unknown' });
      if (req.method === 'POST') {
        for (const packet of body.split('\x1e')) {
          if (packet === '40') queue.push(`40${JSON.stringify({ sid: randomBytes(15).toString('base64url') })}`);
          else if (packet.startsWith('42')) onEvent(queue, packet);
        }
        return send(200, 'text/html', 'ok');
      }
      return send(200, 'text/plain; charset=UTF-8', queue.length === 0 ? '6' : queue.splice(0).join('\x1e'));
    }
    if (p === '/sso/start' || p === '/sso/step' || p === '/sso/finish') {
      const from = url.searchParams.get('t');
      if (p !== '/sso/start' && redirects.get(from ?? '') !== p) return json(400, { error: 'bad token' });
      redirects.delete(from ?? '');
      const token = rand();
      const to = p === '/sso/start' ? '/sso/step' : p === '/sso/step' ? '/sso/finish' : '/home';
      redirects.set(token, to);
      if (to !== '/home') return send(302, undefined, undefined, { location: `${to}?t=${token}` });
      const sess = rand();
      cookies.add(sess);
      return send(302, undefined, undefined, { location: `/home?t=${token}`, 'set-cookie': `sess=${sess}; Path=/; HttpOnly` });
    }
    if (p === '/home') {
      const sess = /(?:^|;\s*)sess=([^;]+)/.exec(req.headers.cookie ?? '')?.[1] ?? '';
      if (redirects.get(url.searchParams.get('t') ?? '') !== '/home' || !cookies.has(sess)) return json(401, { error: 'not signed in' });
      return json(200, { user: 'ada', status });
    }
    if (p === '/soap' && req.method === 'POST') {
      const xml = (inner: string) => `<?xml version="1.0" encoding="utf-8"?>\n<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
      if (body.includes('<CreateOrder>')) return send(200, 'text/xml; charset=utf-8', xml(`<CreateOrderResponse><OrderId>${order()}</OrderId></CreateOrderResponse>`));
      const id = /<OrderId>([^<]*)<\/OrderId>/.exec(body)?.[1] ?? '';
      if (!orders.has(id)) return send(500, 'text/xml; charset=utf-8', xml('<soap:Fault><faultcode>soap:Client</faultcode><faultstring>no such order</faultstring></soap:Fault>'));
      return send(200, 'text/xml; charset=utf-8', xml(`<GetOrderResponse><OrderId>${id}</OrderId><Status>${status}</Status></GetOrderResponse>`));
    }
    if (p === '/export.csv') {
      const job = `job_${rand()}`;
      jobs.add(job);
      return send(200, 'text/csv', `job,${job}\nitem,qty\nwidget,2\n`);
    }
    const job = /^\/jobs\/([\w-]+)$/.exec(p);
    if (job) return jobs.has(job[1]!) ? json(200, { job: job[1], state: 'done', status }) : json(404, { error: 'no such job' });
    if (p === '/reports' && req.method === 'POST') {
      const op = rand();
      operations.set(op, 0);
      return json(202, { status: 'accepted' }, { 'operation-location': `/operations/${op}`, 'retry-after': '0' });
    }
    const op = /^\/operations\/([\w-]+)$/.exec(p);
    if (op) {
      const polls = operations.get(op[1]!);
      if (polls === undefined) return json(404, { error: 'no such operation' });
      operations.set(op[1]!, polls + 1);
      // Running on the first poll, done on the second with the report's place.
      return polls === 0 ? json(200, { state: 'running' }, { 'retry-after': '0' }) : json(200, { state: 'succeeded', resourceLocation: `/reports/${op[1]}` });
    }
    const report = /^\/reports\/([\w-]+)$/.exec(p);
    if (report) return operations.has(report[1]!) ? json(200, { report: 'sales', status }) : json(404, { error: 'no such report' });
    json(404, { error: 'no route' });
  });
  // Engine.IO's upgrade: a WebSocket with the polling session's sid, `2probe` → `3probe`, `5`, then packets both ways.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const sid = new URL(req.url ?? '/', 'http://app').searchParams.get('sid') ?? '';
    if (!sessions.has(sid)) {
      refused.push('WS /socket.io/ unknown sid');
      return socket.destroy();
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      log.push('WS /socket.io/ 101');
      const queue: string[] = [];
      ws.on('message', (data) => {
        const packet = String(data);
        if (packet === '2probe') return ws.send('3probe');
        if (packet === '41') return ws.close(1000);
        if (packet.startsWith('42')) onEvent(queue, packet);
        for (const m of queue.splice(0)) ws.send(m);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, refused, keys: [], close: () => closeHttpAndWs(server, wss) };
}

/** Starts one h2c build: POST /orders makes a random id, GET /orders/<id> reads it (404 for one it never made). */
export async function startH2FlowsApp(build: 'old' | 'new' = 'old'): Promise<FlowsApp> {
  const log: string[] = [];
  const refused: string[] = [];
  const orders = new Set<string>();
  const server = http2.createServer();
  const open = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  server.on('stream', (stream, headers) => {
    const method = String(headers[':method']);
    const path = String(headers[':path']);
    stream.resume();
    stream.once('end', () => {
      const send = (code: number, v: unknown) => {
        const line = `${method} ${path.replace(/\/ord_.*/, '/{id}')} ${code}`;
        log.push(line);
        if (code >= 400) refused.push(line);
        stream.respond({ ':status': code, 'content-type': 'application/json' });
        stream.end(JSON.stringify(v));
      };
      if (method === 'POST' && path === '/orders') {
        const id = `ord_${rand()}`;
        orders.add(id);
        return send(201, { id });
      }
      const id = /^\/orders\/([\w-]+)$/.exec(path)?.[1];
      if (id !== undefined && orders.has(id)) return send(200, { id, status: build === 'new' ? 'active' : 'open' });
      send(404, { error: 'no such order' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = async () => {
    for (const s of open) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, refused, keys: [], close };
}

/** The clients of these flows through `url`; each throws if refused. `settle(n)` as web-flows.ts's. */
export function moreFlowsClient(url: string, settle?: (n: number) => Promise<void>) {
  const c = new Client(url);
  const call = flowsCall(c, settle);
  const event = (text: string, name: string) => {
    const packet = text.split('\x1e').find((p) => p.startsWith('42'));
    const [got, data] = JSON.parse(packet?.slice(2) ?? '[]') as [string, Record<string, string>];
    if (got !== name) throw new Error(`expected ${name}, got ${text}`);
    return data;
  };
  return {
    /** Engine.IO polling: handshake, CONNECT, a `create` event, a `get` of its order id by POST, then the upgrade and a `get` over WebSocket: both statuses. */
    async socketIo(): Promise<string[]> {
      const eio = '/socket.io/?EIO=4&transport=polling';
      const sid = (JSON.parse((await call('GET', `${eio}&t=Nx1`)).text.slice(1)) as { sid: string }).sid;
      const at = `${eio}&sid=${sid}`;
      const post = (packet: string) => call('POST', at, { 'content-type': 'text/plain;charset=UTF-8' }, packet);
      await post('40');
      await call('GET', at);
      await post(`42${JSON.stringify(['create', { item: 'widget' }])}`);
      const { orderId } = event((await call('GET', at)).text, 'created');
      await post(`42${JSON.stringify(['get', { orderId }])}`);
      const one = event((await call('GET', at)).text, 'order').status!;
      const ws = new WebSocket(`${url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket&sid=${sid}`);
      await once(ws, 'open');
      ws.send('2probe');
      await once(ws, 'message');
      ws.send('5');
      ws.send(`42${JSON.stringify(['get', { orderId }])}`);
      const [data] = (await once(ws, 'message')) as [Buffer];
      ws.send('41');
      await once(ws, 'close');
      return [one, event(String(data), 'order').status!];
    },
    /** Three 302s, each Location with a fresh token, the last setting a cookie; then the page they lead to: its status. */
    async redirectChain(): Promise<string> {
      let at = '/sso/start';
      let cookie = '';
      for (let i = 0; i < 3; i++) {
        const hop = await call('GET', at, cookie ? { cookie } : {});
        if (hop.status !== 302) throw new Error(`${at}: ${hop.status}`);
        at = String(hop.headers.location);
        if (hop.headers['set-cookie'] !== undefined) cookie = String(hop.headers['set-cookie']).split(';')[0]!;
      }
      return (await call('GET', at, { cookie })).json().status as string;
    },
    /** A SOAP CreateOrder answered with an OrderId, sent back in a GetOrder's body: the Status. */
    async soap(): Promise<string> {
      const envelope = (inner: string) => `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
      const headers = { 'content-type': 'text/xml; charset=utf-8' };
      const made = await call('POST', '/soap', { ...headers, soapaction: '"CreateOrder"' }, envelope('<CreateOrder><Item>widget</Item></CreateOrder>'));
      const id = /<OrderId>([^<]*)<\/OrderId>/.exec(made.text)![1]!;
      const got = await call('POST', '/soap', { ...headers, soapaction: '"GetOrder"' }, envelope(`<GetOrder><OrderId>${id}</OrderId></GetOrder>`));
      return /<Status>([^<]*)<\/Status>/.exec(got.text)![1]!;
    },
    /** A CSV export whose first line names its job, then GET /jobs/<id>: the job's status. */
    async exportJob(): Promise<string> {
      const csv = await call('GET', '/export.csv', { accept: 'text/csv' });
      const job = csv.text.split('\n')[0]!.split(',')[1]!;
      return (await call('GET', `/jobs/${job}`)).json().status as string;
    },
    /** POST answered 202 with Operation-Location, polled until succeeded, then its resource: the report's status. */
    async longRunning(): Promise<string> {
      const started = await call('POST', '/reports', { 'content-type': 'application/json' }, '{"kind":"sales"}');
      const op = String(started.headers['operation-location']);
      for (;;) {
        const polled = (await call('GET', op)).json();
        if (polled.state === 'succeeded') return (await call('GET', polled.resourceLocation as string)).json().status as string;
      }
    },
    close: () => c.close(),
  };
}

/** On one h2c connection: POST /orders, then GET /orders/<id> of the id answered: the order's status. */
export async function h2CreateThenRead(url: string): Promise<string> {
  const session = http2.connect(url);
  const request = (headers: http2.OutgoingHttpHeaders, body?: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const s = session.request(headers);
    let status = 0;
    let text = '';
    s.on('response', (h) => (status = Number(h[':status'])));
    s.setEncoding('utf8');
    s.on('data', (d: string) => (text += d));
    s.once('end', () => (status >= 400 ? reject(new Error(`${String(headers[':path'])}: ${status} ${text}`)) : resolve({ status, body: text })));
    s.once('error', reject);
    s.end(body);
  });
  try {
    const made = JSON.parse((await request({ ':method': 'POST', ':path': '/orders', 'content-type': 'application/json' }, '{"item":"widget"}')).body) as { id: string };
    return (JSON.parse((await request({ ':method': 'GET', ':path': `/orders/${made.id}` })).body) as { status: string }).status;
  } finally {
    session.close();
  }
}
