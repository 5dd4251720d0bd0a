// A client's seeded random walk over the shadow service's routes
// (test/scenario/shadow/service.ts), through whatever listens at `url` (bb
// shadow, bb capture): logins whose session cookie later requests carry, item
// lists and reads of the ids they issued, orders created and read back, event
// streams read in part, WebSocket chats that send issued ids back, pages of
// markup. Several at once make traffic whose interleaving changes run to run.
// Over https, through a forward proxy (HTTPS_PROXY: CONNECT tunnels) when told `via`.
import { once } from 'node:events';
import http from 'node:http';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import tls, { type TLSSocket } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import { Client, ProxyAgent, type Dispatcher } from 'undici';
import WebSocket from 'ws';

/** How a walk reaches an https `url`: trusting `ca`, and through the forward proxy at `via` (a CONNECT tunnel per connection); `seen` is told what the client saw complete. */
export interface WalkTls {
  ca?: string;
  via?: string;
  /** Each exchange once its answer was read whole (`GET /me 200`), each event read (`GET /events 200 event 2`), each chat message's echo (`WS /chat {…}`), for the user's x-user header. */
  seen?: (user: string, what: string) => void;
}

/** A TLS connection to `target`'s host through the forward proxy at `via` (CONNECT, then TLS with `alpn`). */
export async function tunnel(via: string, target: string, ca: string | undefined, alpn: string[]): Promise<TLSSocket> {
  const proxy = new URL(via);
  const { hostname, port } = new URL(target);
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: `${hostname}:${port}`, headers: { host: `${hostname}:${port}` } });
  req.end();
  const [res, socket] = (await once(req, 'connect')) as [http.IncomingMessage, import('node:net').Socket];
  if (res.statusCode !== 200) throw new Error(`CONNECT ${hostname}:${port}: ${res.statusCode}`);
  const secure = tls.connect({ socket, servername: hostname, ALPNProtocols: alpn, ...(ca ? { ca } : {}) });
  await once(secure, 'secureConnect');
  return secure;
}

/** The walk's HTTP/1.1 client of `url`: its own connection, or a proxy agent's through `via`. */
function clientOf(url: string, t: WalkTls): Pick<Dispatcher, 'request' | 'close'> {
  if (!t.via) return new Client(url, t.ca ? { connect: { ca: t.ca } } : {});
  const agent = new ProxyAgent({ uri: t.via, ...(t.ca ? { requestTls: { ca: t.ca } } : {}) });
  return { request: ((o: Dispatcher.RequestOptions) => agent.request({ ...o, origin: url })) as Dispatcher['request'], close: (() => agent.close()) as Dispatcher['close'] };
}

/**
 * One client's random walk (seeded by `random`) of `steps` steps through `url`; it leaves an event stream after
 * `events` events (the service sends three; how many more crossed before the client left is timing, which bb diff
 * leaves out: diff/compare-loop.ts asFarAs); over https as `t` says.
 */
export async function walk(url: string, user: number, random: () => number, steps = 16, events = 3, t: WalkTls = {}): Promise<void> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const c = clientOf(url, t);
  let cookie = '';
  const items: string[] = [];
  const orders: number[] = [];
  const headers = () => ({ 'x-user': `user-${user}`, ...(cookie ? { cookie } : {}) });
  const seen = (what: string) => t.seen?.(`user-${user}`, what);
  try {
    for (let i = 0; i < steps; i++) {
      const step = pick(['session', 'me', 'items', 'item', 'order', 'read-order', 'chat', 'events', 'note'] as const);
      if (step === 'session') {
        const res = await c.request({ method: 'GET', path: '/session', headers: headers() });
        cookie = String(res.headers['set-cookie']).split(';')[0]!;
        await res.body.text();
        seen(`GET /session ${res.statusCode}`);
      } else if (step === 'items') {
        const res = await c.request({ method: 'GET', path: '/items', headers: headers() });
        items.push(((await res.body.json()) as { items: Array<{ id: string }> }).items[0]!.id);
        seen(`GET /items ${res.statusCode}`);
      } else if (step === 'order') {
        const res = await c.request({ method: 'POST', path: '/orders', headers: { ...headers(), 'content-type': 'application/json' }, body: '{}' });
        orders.push(((await res.body.json()) as { id: number }).id);
        seen(`POST /orders ${res.statusCode}`);
      } else if (step === 'events') {
        const res = await c.request({ method: 'GET', path: '/events', headers: headers() });
        let got = '';
        for await (const chunk of res.body) {
          const before = got.split('\n\n').length;
          got += chunk;
          for (let n = before; n < got.split('\n\n').length; n++) seen(`GET /events ${res.statusCode} event ${n}`);
          if (got.split('data:').length > events) break;
        }
      } else if (step === 'chat') {
        const socket = t.via ? await tunnel(t.via, url, t.ca, ['http/1.1']) : undefined;
        const ws = new WebSocket(`${url.replace('http', 'ws')}/chat`, { headers: headers(), ...(t.ca ? { ca: t.ca } : {}), ...(socket ? { createConnection: () => socket } : {}) });
        await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
        for (let k = 0, n = 1 + Math.floor(random() * 3); k < n; k++) {
          // The echo, or the socket's end (its peer went away) as an error.
          const echoed = new Promise<WebSocket.RawData>((r, j) => (ws.once('message', r), ws.once('close', () => j(new Error('the chat closed before its echo')))));
          ws.send(`hello ${user} ${k} ${items.length ? pick(items) : '-'}`);
          seen(`WS /chat ${String(await echoed)}`);
        }
        ws.close();
        if (ws.readyState !== WebSocket.CLOSED) await new Promise((r) => ws.once('close', r));
      } else {
        const path = step === 'me' ? '/me' : step === 'note' ? '/note' : step === 'item' && items.length ? `/items/${pick(items)}` : step === 'read-order' && orders.length ? `/orders/${pick(orders)}` : '/me';
        const res = await c.request({ method: 'GET', path, headers: headers() });
        await res.body.text();
        seen(`GET ${path} ${res.statusCode}`);
      }
      if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
    }
  } finally {
    await c.close();
  }
}

/**
 * The same walk over HTTP/2 (cleartext: the service started with `h2c`; over TLS as `opts` says), every call a stream
 * of the client's one session, no chat; with `gzip` the client accepts gzipped answers (and reads them inflated); it
 * leaves an event stream after `events` events (2; 3 reads them all, as `walk`'s).
 */
export async function walkH2(url: string, user: number, random: () => number, steps = 16, opts: { gzip?: boolean; events?: number } & WalkTls = {}): Promise<void> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const socket = opts.via ? await tunnel(opts.via, url, opts.ca, ['h2']) : undefined;
  const session: ClientHttp2Session = connect(url, { ...(opts.ca ? { ca: opts.ca } : {}), ...(socket ? { createConnection: () => socket } : {}) });
  await new Promise<void>((resolve, reject) => (session.once('connect', () => resolve()), session.once('error', reject)));
  let cookie = '';
  const items: string[] = [];
  const orders: number[] = [];
  /** One call; the answer's headers and (inflated) body, or its first `events` SSE events read before cancelling. */
  const call = (method: string, path: string, body?: string, events?: number) =>
    new Promise<{ headers: Record<string, unknown>; text: string }>((resolve, reject) => {
      const stream = session.request({ ':method': method, ':path': path, 'x-user': `user-${user}`, ...(cookie ? { cookie } : {}), ...(opts.gzip ? { 'accept-encoding': 'gzip' } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) });
      let headers: Record<string, unknown> = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => (headers = h));
      stream.on('data', (c: Buffer) => {
        const before = Buffer.concat(chunks).toString().split('\n\n').length;
        chunks.push(c);
        if (events !== undefined) for (let n = before, after = Buffer.concat(chunks).toString().split('\n\n').length; n < after; n++) opts.seen?.(`user-${user}`, `${method} ${path} ${String(headers[':status'])} event ${n}`);
        if (events !== undefined && Buffer.concat(chunks).toString().split('data:').length > events) {
          // Left as a browser leaves a stream (RST_STREAM CANCEL): node:http2 keeps a stream reset with NO_ERROR
          // while a write of its server's is pending, and its server then never closes the connection.
          stream.close(constants.NGHTTP2_CANCEL);
          resolve({ headers, text: Buffer.concat(chunks).toString() });
        }
      });
      // node:http2 ends a stream's readable side when the connection ends under it (a killed peer's FIN) too, and
      // then closes it with CANCEL: the answer is whole only when the stream closed with NO_ERROR after its end.
      let ended = false;
      stream.on('end', () => (ended = true));
      stream.on('error', reject);
      stream.on('close', () => {
        if (!ended || stream.rstCode !== constants.NGHTTP2_NO_ERROR) return reject(new Error(`${method} ${path}: the stream closed before its end (${stream.rstCode})`));
        const raw = Buffer.concat(chunks);
        if (events === undefined && headers[':status'] !== undefined) opts.seen?.(`user-${user}`, `${method} ${path} ${String(headers[':status'])}`);
        resolve({ headers, text: (headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString() });
      });
      stream.end(body);
    });
  try {
    for (let i = 0; i < steps; i++) {
      const step = pick(['session', 'me', 'items', 'item', 'order', 'read-order', 'events', 'note'] as const);
      if (step === 'session') cookie = String((await call('GET', '/session')).headers['set-cookie']).split(';')[0]!;
      else if (step === 'items') items.push((JSON.parse((await call('GET', '/items')).text) as { items: Array<{ id: string }> }).items[0]!.id);
      else if (step === 'order') orders.push((JSON.parse((await call('POST', '/orders', '{}')).text) as { id: number }).id);
      else if (step === 'events') await call('GET', '/events', undefined, opts.events ?? 2);
      else await call('GET', step === 'me' ? '/me' : step === 'note' ? '/note' : step === 'item' && items.length ? `/items/${pick(items)}` : step === 'read-order' && orders.length ? `/orders/${pick(orders)}` : '/me');
      if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 30)));
    }
  } finally {
    // A session already gone (its peer went away) has nothing left to close: close's callback would never come.
    if (!session.destroyed) await new Promise<void>((r) => session.close(() => r()));
  }
}
