// The service the replay tests re-drive: it makes up every id at random
// (items, sessions, WebSocket cursors), so a replay that sends the old ids
// back gets 404s and one that follows them gets what the original got.
// Counts what it saw (requests in flight at once, WS messages) for asserts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { closeHttpAndWs } from '../../helpers/servers.js';

/** A running replay service. */
export interface ReplayService {
  url: string;
  /** Most requests in flight at once. */
  maxInFlight(): number;
  /** Client WS messages received, as text. */
  wsReceived: string[];
  /** Requests seen: "METHOD path status". */
  log: string[];
  /** When each request arrived (performance.now() of this process). */
  arrivals: number[];
  close(): Promise<void>;
}

/** A page a browser loads: create an item, read it back by its id, then the WebSocket conversation. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>replay app</title><link rel="icon" href="data:,"></head>
<body><pre id="out"></pre><script>
(async () => {
  const created = await (await fetch('/items', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'from the browser' }) })).json();
  const got = await fetch('/items/' + created.id);
  document.getElementById('out').textContent = got.status;
  const ws = new WebSocket('ws://' + location.host + '/ws');
  let sub;
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.type === 'hello') ws.send(JSON.stringify({ type: 'subscribe', session: m.session, cursor: m.cursor }));
    else if (m.type === 'subscribed') { sub = m.next; ws.send(JSON.stringify({ type: 'ack', cursor: sub })); }
    else if (m.type === 'event') ws.close(1000, 'done');
  };
  ws.onclose = () => { document.body.dataset.done = '1'; };
})();
</script></body></html>`;

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

/** Starts one fresh instance on 127.0.0.1, port 0. */
export async function startReplayService(): Promise<ReplayService> {
  const items = new Map<string, { id: string; name: string; n: number }>();
  const sessions = new Map<string, string>();
  const cursors = new Map<number, string>();
  const tokens = new Set<string>();
  const sids = new Set<string>();
  let inFlight = 0;
  let max = 0;
  const log: string[] = [];
  const wsReceived: string[] = [];
  const send = (res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string | string[]> = {}) => {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
    res.end(text);
  };
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    arrivals.push(performance.now());
    inFlight++;
    max = Math.max(max, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url!, 'http://x');
      const body = Buffer.concat(chunks).toString();
      const json = () => (body ? JSON.parse(body) : {});
      const parts = url.pathname.split('/').filter(Boolean);
      res.on('finish', () => {
        inFlight--;
        log.push(`${req.method} ${url.pathname} ${res.statusCode}`);
      });
      if (url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        return res.end(PAGE);
      }
      // /slow?ms=N answers after N ms (concurrency tests).
      if (parts[0] === 'slow') {
        await new Promise((r) => setTimeout(r, Number(url.searchParams.get('ms') ?? 200)));
        return send(res, 200, { ok: true });
      }
      if (parts[0] === 'login' && req.method === 'POST') {
        const { user, password } = json();
        if (password !== 'hunter2') return send(res, 401, { error: 'bad password' });
        const sid = randomBytes(12).toString('base64url');
        sessions.set(sid, user);
        return send(res, 200, { user }, { 'set-cookie': `sid=${sid}; Path=/; HttpOnly` });
      }
      if (parts[0] === 'me') {
        const sid = /sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
        const user = sid ? sessions.get(sid) : undefined;
        return user ? send(res, 200, { user }) : send(res, 401, { error: 'no session' });
      }
      // A plain-text token, then a request that must carry it (as `token`, a name bb redacts).
      if (parts[0] === 'token') {
        const token = id('tok');
        tokens.add(token);
        return send(res, 200, token);
      }
      if (parts[0] === 'secure') return tokens.has(url.searchParams.get('token') ?? '') ? send(res, 200, { ok: true }) : send(res, 403, { error: 'bad token' });
      // An API login whose token the client sends back in a header named as a token (not Authorization).
      if (parts[0] === 'api-login') {
        const token = id('tok');
        tokens.add(token);
        return send(res, 200, { user: { token } });
      }
      if (parts[0] === 'whoami') return tokens.has(String(req.headers['authorization-token'] ?? '')) ? send(res, 200, { ok: true }) : send(res, 403, { error: 'bad token' });
      // Engine.IO's long-polling handshake: a packet type before the JSON; later polls carry the sid.
      if (parts[0] === 'eio') {
        const sid = url.searchParams.get('sid');
        if (sid === null) {
          const fresh = randomBytes(10).toString('base64url');
          sids.add(fresh);
          res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' });
          return res.end(`0${JSON.stringify({ sid: fresh, upgrades: ['websocket'], pingInterval: 25000, pingTimeout: 20000, maxPayload: 1000000 })}`);
        }
        if (!sids.has(sid)) return send(res, 400, { code: 1, message: 'Session ID unknown' });
        res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' });
        return res.end('40{"sid":"' + randomBytes(10).toString('base64url') + '"}\x1e2');
      }
      if (parts[0] === 'items') {
        const item = parts[1] ? items.get(parts[1]) : undefined;
        if (!parts[1] && req.method === 'POST') {
          const created = { id: id('item'), name: json().name, n: 0 };
          items.set(created.id, created);
          return send(res, 201, created, { location: `/items/${created.id}` });
        }
        if (!parts[1] && req.method === 'GET') return send(res, 200, [...items.values()]);
        if (!item) return send(res, 404, { error: 'no such item' });
        if (req.method === 'GET') return send(res, 200, item);
        if (req.method === 'PATCH') {
          Object.assign(item, json(), { n: item.n + 1 });
          return send(res, 200, item);
        }
        if (req.method === 'DELETE') {
          items.delete(item.id);
          return send(res, 204);
        }
      }
      send(res, 404, { error: 'not found' });
    });
  });
  // WebSocket: hello with a session, subscribe with a server-issued cursor, replies.
  const wss = new WebSocketServer({ server, perMessageDeflate: true });
  wss.on('connection', (ws) => {
    const session = id('wss');
    let n = 0;
    ws.send(JSON.stringify({ type: 'hello', session, cursor: Math.floor(100000 + Math.random() * 900000) }));
    ws.on('message', (data) => {
      const text = data.toString();
      wsReceived.push(text);
      const msg = JSON.parse(text);
      if (msg.type === 'subscribe') {
        const ok = msg.session === session && typeof msg.cursor === 'number';
        const cursor = Math.floor(100000 + Math.random() * 900000);
        cursors.set(cursor, session);
        ws.send(JSON.stringify(ok ? { type: 'subscribed', next: cursor } : { type: 'error', error: 'unknown session' }));
      } else if (msg.type === 'ack') {
        ws.send(JSON.stringify(cursors.get(msg.cursor) === session ? { type: 'event', n: ++n } : { type: 'error', error: 'unknown cursor' }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxInFlight: () => max,
    wsReceived,
    log,
    arrivals,
    close: () => closeHttpAndWs(server, wss),
  };
}
