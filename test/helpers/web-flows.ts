// A small API with the flows real clients follow, each sending back a value
// the server issued: a conditional GET (its ETag in If-None-Match, its
// Last-Modified in If-Modified-Since), an OAuth-style redirect (the 302's
// Location carries `?code=…&state=…`, the client calls back with them, then
// uses the token it got), pagination (a `Link: rel="next"` header, then a
// `next_cursor` field), an id inside a longer string (`"href":
// "/orders/1042/items"`, then a GET of it), GraphQL over WebSocket (the
// graphql-transport-ws protocol: its `next` messages carry order ids the
// client then queries over HTTP) and a multipart upload answered with a file
// id that is then fetched. And more flows: an event stream resumed with
// `Last-Event-ID`, a tus-style resumable upload (POST answers `Location:
// /files/<id>`, PATCHes with `Upload-Offset`, a HEAD for the offset), HAL
// and JSON:API links followed, a JSON login's access and refresh tokens
// (Bearer, then refreshed), an `Idempotency-Key` the client made up (a POST
// sent twice answers the same payment; `keys` lists the keys each build got),
// a WebSocket's resume token sent back on a new connection's URL, and a feed
// paged by opaque standard-base64 cursors sent back URL-encoded. Every issued value is random or numbered from the
// build's own start, so a replay or a mirror that sends the recorded value to
// another server is refused (counted in `refused`) or answered otherwise
// (a conditional GET answered 200, counted too).
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Client } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { bodyServer, closeHttpAndWs } from './servers.js';

/** Pages of /feed: enough that some cursors show a `+` or `/` and some none (about half of 24 characters show one). */
export const FEED_PAGES = 12;

/** A running build of the API. */
export interface FlowsApp {
  url: string;
  /** Each request as "METHOD path status", in order. */
  log: string[];
  /** Requests refused (400, 401, 404) or a conditional GET that did not match the value it sent ("METHOD path status"). */
  refused: string[];
  /** Each Idempotency-Key the build got, in order (the client's own, never rewritten). */
  keys: string[];
  close(): Promise<void>;
}

/** Starts one build: order ids count from `firstId`; the `new` build calls an order's status `active`, not `open`. */
export async function startFlowsApp(firstId: number, build: 'old' | 'new' = 'old'): Promise<FlowsApp> {
  const log: string[] = [];
  const refused: string[] = [];
  const rand = () => randomBytes(9).toString('base64url');
  const status = build === 'new' ? 'active' : 'open';
  // Each build's document: its own ETag, and its own Last-Modified (a whole second apart per build).
  const etag = `"${randomBytes(8).toString('hex')}"`;
  const lastModified = new Date(Math.floor(Date.now() / 1000) * 1000 - (firstId % 97) * 1000).toUTCString();
  const codes = new Set<string>();
  const tokens = new Set<string>();
  const cursors = new Map<string, number>();
  const feedCursors = new Map<string, number>();
  const orders = new Map<string, string>();
  const files = new Map<string, string>();
  const events = new Map<string, number>();
  const uploads = new Map<string, { length: number; data: string }>();
  const refreshes = new Set<string>();
  const payments = new Map<string, unknown>();
  const resumes = new Set<string>();
  const keys: string[] = [];
  let next = firstId;
  const order = (): string => {
    const id = String(next++);
    orders.set(id, 'widget');
    return id;
  };
  const server = bodyServer((req, res, bytes, url) => {
    const body = bytes.toString('latin1');
    const send = (code: number, json: unknown, headers: Record<string, string> = {}, miss = false) => {
      const line = `${req.method} ${url.pathname} ${code}`;
      log.push(line);
      if (code >= 400 || miss) refused.push(line);
      res.writeHead(code, { ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...headers }).end(json === undefined ? undefined : JSON.stringify(json));
    };
    const p = url.pathname;
    if (p === '/doc') {
      const validators = { etag, 'last-modified': lastModified, 'cache-control': 'no-cache' };
      const inm = req.headers['if-none-match'];
      const ims = req.headers['if-modified-since'];
      if (inm !== undefined) return inm === etag ? send(304, undefined, validators) : send(200, { title: 'Doc', status }, validators, true);
      if (ims !== undefined) return Date.parse(ims) >= Date.parse(lastModified) ? send(304, undefined, validators) : send(200, { title: 'Doc', status }, validators, true);
      return send(200, { title: 'Doc', status }, validators);
    }
    if (p === '/authorize') {
      const code = rand();
      codes.add(code);
      return send(302, undefined, { location: `/callback?code=${code}&state=${encodeURIComponent(url.searchParams.get('state') ?? '')}` });
    }
    if (p === '/callback') {
      const code = url.searchParams.get('code') ?? '';
      if (!codes.delete(code)) return send(400, { error: 'invalid_grant' });
      const token = rand();
      tokens.add(token);
      return send(200, { access_token: token, token_type: 'Bearer', state: url.searchParams.get('state') });
    }
    if (p === '/me') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      return tokens.has(token) ? send(200, { name: 'ada', status }) : send(401, { error: 'invalid_token' });
    }
    if (p === '/items') {
      const cursor = url.searchParams.get('cursor');
      const page = cursor === null ? 0 : cursors.get(cursor);
      if (page === undefined) return send(400, { error: 'bad cursor' });
      // Three pages: the last one has no next.
      if (page >= 2) return send(200, { page, items: [`item-${page}`], status, next_cursor: null });
      const nextCursor = rand();
      cursors.set(nextCursor, page + 1);
      return send(200, { page, items: [`item-${page}`], status, next_cursor: nextCursor }, { link: `</items?cursor=${nextCursor}>; rel="next"` });
    }
    if (p === '/feed') {
      // An opaque cursor in standard base64, random each time: whether it shows a `+` or a `/`, and where, varies
      // from run to run. The client sends it back URL-encoded in the query, the last page's in a JSON body.
      const cursor = req.method === 'POST' ? (JSON.parse(body || '{}') as { cursor?: string }).cursor : url.searchParams.get('cursor');
      const page = cursor === null || cursor === undefined ? 0 : feedCursors.get(cursor);
      if (page === undefined) return send(400, { error: 'bad cursor' });
      if (page >= FEED_PAGES - 1) return send(200, { page, status, next: null });
      const nextCursor = randomBytes(18).toString('base64');
      feedCursors.set(nextCursor, page + 1);
      return send(200, { page, status, next: nextCursor });
    }
    if (p === '/orders' && req.method === 'POST') {
      const id = order();
      return send(201, { id: Number(id), href: `/orders/${id}/items` });
    }
    const items = /^\/orders\/(\d+)\/items$/.exec(p);
    if (items) return orders.has(items[1]!) ? send(200, { order: Number(items[1]), items: ['widget'], status }) : send(404, { error: 'no such order' });
    if (p === '/graphql' && req.method === 'POST') {
      const { variables } = JSON.parse(body) as { variables?: { id?: string } };
      const id = variables?.id ?? '';
      return orders.has(id) ? send(200, { data: { order: { id, status } } }) : send(200, { data: { order: null }, errors: [{ message: 'not found' }] }, {}, true);
    }
    if (p === '/events') {
      // An event stream that drops after two events; a client reconnecting with Last-Event-ID gets the rest.
      const last = req.headers['last-event-id'];
      const from = last === undefined ? 0 : events.get(String(last));
      if (from === undefined) return send(400, { error: 'unknown Last-Event-ID' });
      log.push(`GET /events 200`);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const upTo = from === 0 ? 2 : 3;
      for (let n = from; n < upTo; n++) {
        // 16 characters: an event id nobody sends back is compared as its shape (a 12-character one would differ as text).
        const id = randomBytes(12).toString('base64url');
        events.set(id, n + 1);
        res.write(`id: ${id}\ndata: ${JSON.stringify(n === 2 ? { n, status } : { n })}\n\n`);
      }
      return res.end();
    }
    if (p === '/files' && req.method === 'POST' && req.headers['tus-resumable'] !== undefined) {
      const id = rand();
      uploads.set(id, { length: Number(req.headers['upload-length']), data: '' });
      return send(201, undefined, { location: `/files/${id}`, 'tus-resumable': '1.0.0' });
    }
    const tus = /^\/files\/([\w-]+)$/.exec(p);
    if (tus && (req.method === 'PATCH' || req.method === 'HEAD')) {
      const u = uploads.get(tus[1]!);
      if (u === undefined) return send(404, undefined);
      if (req.method === 'HEAD') return send(200, undefined, { 'upload-offset': String(u.data.length), 'upload-length': String(u.length), 'tus-resumable': '1.0.0' });
      if (Number(req.headers['upload-offset']) !== u.data.length) return send(409, { error: 'offset mismatch' });
      u.data += body;
      if (u.data.length === u.length) files.set(tus[1]!, u.data);
      return send(204, undefined, { 'upload-offset': String(u.data.length), 'tus-resumable': '1.0.0' });
    }
    if (p === '/carts' && req.method === 'POST') {
      const id = order();
      return send(201, { id: Number(id), _links: { self: { href: `/carts/${id}` } } }, { 'content-type': 'application/hal+json' });
    }
    const cart = /^\/carts\/(\d+)(\/items)?$/.exec(p);
    if (cart) {
      if (!orders.has(cart[1]!)) return send(404, { errors: [{ title: 'no such cart' }] });
      if (cart[2] === undefined) return send(200, { data: { type: 'carts', id: cart[1], attributes: { items: 1 }, links: { self: `/carts/${cart[1]}` } }, links: { related: `/carts/${cart[1]}/items` } });
      return send(200, { cart: Number(cart[1]), items: ['widget'], status });
    }
    // A login grants an access and a refresh token; POST /token trades the refresh token for new ones (the old access token stops working).
    const grant = () => {
      const [access, refresh] = [rand(), rand()];
      tokens.add(access);
      refreshes.add(refresh);
      return send(200, { access_token: access, refresh_token: refresh, token_type: 'Bearer', expires_in: 3600 });
    };
    if (p === '/login' && req.method === 'POST') return grant();
    if (p === '/token' && req.method === 'POST') {
      const { refresh_token: old } = JSON.parse(body) as { refresh_token?: string };
      if (!refreshes.delete(old ?? '')) return send(400, { error: 'invalid_grant' });
      tokens.clear();
      return grant();
    }
    if (p === '/payments' && req.method === 'POST') {
      const key = String(req.headers['idempotency-key'] ?? '');
      keys.push(key);
      const done = payments.get(key);
      if (done !== undefined) return send(201, done, { 'idempotent-replayed': 'true' });
      const made = { id: Number(order()), amount: 500, status };
      payments.set(key, made);
      return send(201, made);
    }
    if (p === '/files' && req.method === 'POST') {
      const content = /\r\n\r\n([\s\S]*?)\r\n--/.exec(body)?.[1];
      if (content === undefined) return send(400, { error: 'no file' });
      const id = `file_${rand()}`;
      files.set(id, content);
      return send(201, { file_id: id, size: content.length });
    }
    const file = /^\/files\/([\w-]+)$/.exec(p);
    if (file) return files.has(file[1]!) ? send(200, { id: file[1], content: files.get(file[1]!), status }) : send(404, { error: 'no such file' });
    send(404, { error: 'no route' });
  });
  // graphql-transport-ws: connection_init → connection_ack; subscribe → `next` messages each with a new order's id, then complete.
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false) });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; id?: string };
      if (m.type === 'connection_init') ws.send(JSON.stringify({ type: 'connection_ack' }));
      else if (m.type === 'subscribe') {
        for (let i = 0; i < 2; i++) ws.send(JSON.stringify({ id: m.id, type: 'next', payload: { data: { orderCreated: { id: order() } } } }));
        ws.send(JSON.stringify({ id: m.id, type: 'complete' }));
      }
    });
  });
  // A live feed: a first connection is handed a resume token; a new connection with `?resume=<token>` is resumed (an unknown one is closed 4401).
  const live = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://app');
    if (url.pathname === '/graphql') return wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    if (url.pathname !== '/live') return socket.destroy();
    live.handleUpgrade(req, socket, head, (ws) => {
      const token = url.searchParams.get('resume');
      if (token === null) {
        const made = rand();
        resumes.add(made);
        log.push('WS /live 101');
        ws.send(JSON.stringify({ type: 'welcome', resume: made }));
      } else if (resumes.delete(token)) {
        log.push('WS /live?resume 101');
        ws.send(JSON.stringify({ type: 'resumed', status }));
      } else {
        log.push('WS /live?resume 4401');
        refused.push('WS /live?resume 4401');
        ws.close(4401, 'unknown resume token');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log, refused, keys, close: async () => { for (const c of live.clients) c.terminate(); live.close(); await closeHttpAndWs(server, wss); } };
}

/**
 * One client's session through `url`, reading what it sends back from the answers; each flow throws if refused.
 * `settle(n)`, when given, is awaited after the n-th answer (bb shadow's tests wait there until it was compared).
 */
export async function flowsClient(url: string, settle?: (n: number) => Promise<void>) {
  const c = new Client(url);
  const call = flowsCall(c, settle);
  return {
    /** GET /doc, then again with If-None-Match (`etag`) or If-Modified-Since (`date`) from its answer: the conditional GET's status. */
    async revalidate(by: 'etag' | 'date'): Promise<number> {
      const first = await call('GET', '/doc');
      const again: Record<string, string> = by === 'etag' ? { 'if-none-match': String(first.headers.etag) } : { 'if-modified-since': String(first.headers['last-modified']) };
      return (await call('GET', '/doc', again)).status;
    },
    /** The authorize redirect, its callback, then /me with the token: /me's status field. */
    async signIn(): Promise<string> {
      const redirect = await call('GET', '/authorize?client_id=cli&state=xyz');
      const token = (await call('GET', String(redirect.headers.location))).json().access_token as string;
      return (await call('GET', '/me', { authorization: `Bearer ${token}` })).json().status as string;
    },
    /** Three pages: the second by the Link header, the third by next_cursor; the pages' numbers. */
    async paginate(): Promise<number[]> {
      const one = await call('GET', '/items');
      const two = await call('GET', /<([^>]+)>; rel="next"/.exec(String(one.headers.link))![1]!);
      const three = await call('GET', `/items?cursor=${two.json().next_cursor}`);
      return [one, two, three].map((p) => p.json().page as number);
    },
    /** Every page of /feed by its standard-base64 cursor, URL-encoded in the query, the last one's in a JSON body: the pages' numbers. */
    async feed(): Promise<number[]> {
      const pages: number[] = [];
      let next: string | null = null;
      for (let i = 0; i < FEED_PAGES; i++) {
        const answer: { page: number; next: string | null } =
          next === null ? (await call('GET', '/feed')).json() : i === FEED_PAGES - 1 ? (await call('POST', '/feed', { 'content-type': 'application/json' }, JSON.stringify({ cursor: next }))).json() : (await call('GET', `/feed?cursor=${encodeURIComponent(next)}`)).json();
        pages.push(answer.page);
        next = answer.next;
      }
      return pages;
    },
    /** Creates an order and GETs the href it was answered with: the items page's status. */
    async followHref(): Promise<string> {
      const made = await call('POST', '/orders', { 'content-type': 'application/json' }, '{"item":"widget"}');
      return (await call('GET', made.json().href as string)).json().status as string;
    },
    /** Uploads a file as multipart/form-data (a fixed boundary, as a recorded browser's) and fetches it by the id answered. */
    async upload(): Promise<string> {
      const boundary = '----bbFormBoundary7MA4YWxkTrZu0gW';
      const form = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\nhello file\r\n--${boundary}--\r\n`;
      const made = await call('POST', '/files', { 'content-type': `multipart/form-data; boundary=${boundary}` }, form);
      return (await call('GET', `/files/${made.json().file_id}`)).json().content as string;
    },
    /** A graphql-transport-ws subscription whose `next` messages carry order ids, each then queried over HTTP: their statuses. */
    async subscribe(): Promise<string[]> {
      const ids = await new Promise<string[]>((resolve, reject) => {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
        const got: string[] = [];
        ws.once('error', reject);
        ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} })));
        ws.on('message', (data) => {
          const m = JSON.parse(String(data)) as { type: string; payload?: { data: { orderCreated: { id: string } } } };
          if (m.type === 'connection_ack') ws.send(JSON.stringify({ id: 'sub-1', type: 'subscribe', payload: { query: 'subscription { orderCreated { id } }' } }));
          if (m.type === 'next') got.push(m.payload!.data.orderCreated.id);
          if (m.type === 'complete') ws.close(1000);
        });
        ws.once('close', () => resolve(got));
      });
      const statuses: string[] = [];
      for (const id of ids) {
        const res = await call('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query: 'query($id: ID!) { order(id: $id) { id status } }', variables: { id } }));
        statuses.push(res.json().data.order?.status ?? 'missing');
      }
      return statuses;
    },
    /** An event stream that drops after two events, resumed with Last-Event-ID set to the last id it issued: the third event's status. */
    async resumeEvents(): Promise<string> {
      const ids = (text: string) => [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
      const first = await call('GET', '/events', { accept: 'text/event-stream' });
      const again = await call('GET', '/events', { accept: 'text/event-stream', 'last-event-id': ids(first.text).at(-1)! });
      return (JSON.parse(/^data: (.+)$/m.exec(again.text)![1]!) as { status: string }).status;
    },
    /** A tus-style upload: POST (Location: /files/<id>), two PATCHes at their Upload-Offset, a HEAD for the offset, then the file: its status. */
    async resumableUpload(): Promise<string> {
      const tus = { 'tus-resumable': '1.0.0' };
      const made = await call('POST', '/files', { ...tus, 'upload-length': '11' });
      const at = String(made.headers.location);
      let offset = '0';
      for (const part of ['hello', ' world']) offset = String((await call('PATCH', at, { ...tus, 'upload-offset': offset, 'content-type': 'application/offset+octet-stream' }, part)).headers['upload-offset']);
      const head = await call('HEAD', at, tus);
      if (head.headers['upload-offset'] !== '11') throw new Error(`HEAD ${at}: offset ${String(head.headers['upload-offset'])}`);
      return (await call('GET', at)).json().status as string;
    },
    /** A HAL answer's _links.self.href, then that JSON:API document's links.related: the items' status. */
    async followLinks(): Promise<string> {
      const made = await call('POST', '/carts', { 'content-type': 'application/json' }, '{"item":"widget"}');
      const doc = await call('GET', made.json()._links.self.href as string);
      return (await call('GET', doc.json().links.related as string)).json().status as string;
    },
    /** A JSON login's access token as Bearer, then POST /token with its refresh token and the new access token used: both statuses. */
    async refreshTokens(): Promise<string[]> {
      const login = (await call('POST', '/login', { 'content-type': 'application/json' }, '{"user":"ada"}')).json();
      const one = (await call('GET', '/me', { authorization: `Bearer ${login.access_token}` })).json().status as string;
      const renewed = (await call('POST', '/token', { 'content-type': 'application/json' }, JSON.stringify({ grant_type: 'refresh_token', refresh_token: login.refresh_token }))).json();
      const two = (await call('GET', '/me', { authorization: `Bearer ${renewed.access_token}` })).json().status as string;
      return [one, two];
    },
    /** A payment POSTed twice with the Idempotency-Key the client made up: the same payment both times? */
    async payTwice(): Promise<boolean> {
      const headers = { 'content-type': 'application/json', 'idempotency-key': `key_${randomBytes(12).toString('base64url')}` };
      const one = await call('POST', '/payments', headers, '{"amount":500}');
      const two = await call('POST', '/payments', headers, '{"amount":500}');
      return one.json().id === two.json().id;
    },
    /** A WebSocket hands out a resume token and closes; a new WebSocket sends it back in its URL: the resumed status. */
    async resumeSocket(): Promise<string> {
      const talk = (path: string) => new Promise<Record<string, string>>((resolve, reject) => {
        const ws = new WebSocket(`${url.replace('http', 'ws')}${path}`);
        let got: Record<string, string> | undefined;
        ws.once('error', reject);
        ws.once('message', (data) => {
          got = JSON.parse(String(data)) as Record<string, string>;
          ws.close(1000);
        });
        ws.once('close', (code) => (got ? resolve(got) : reject(new Error(`${path}: closed ${code}`))));
      });
      const welcome = await talk('/live');
      return (await talk(`/live?resume=${encodeURIComponent(welcome.resume!)}`)).status!;
    },
    close: () => c.close(),
  };
}

/** A flow's request through `c`: throws on a 4xx or 5xx, awaits `settle(n)` after the n-th answer. */
export function flowsCall(c: Client, settle?: (n: number) => Promise<void>) {
  let answered = 0;
  return async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const res = await c.request({ method, path, headers, ...(body === undefined ? {} : { body }) });
    const text = await res.body.text();
    if (res.statusCode >= 400) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    await settle?.(++answered);
    return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, any> };
  };
}
