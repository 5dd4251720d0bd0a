// Two builds of one small service for bb shadow's tests, on loopback: the
// "old" build (primary and secondary) and the "new" one (candidate) differ
// in a field and a header; both issue random ids and a random session cookie
// (Max-Age) that later requests must carry (a server that sees another
// server's cookie answers 401). A WebSocket chat echoes messages, the new
// build with a changed field. Each server counts the requests it got. Ids are
// 24 hex digits: a 12-digit one is all decimal digits about once in 300
// (docs/diff.md, numeric ids), a shape change no test here is about. Orders
// have sequential numbers from `firstOrder` (a plain number binds only by its
// use, as a database's ids do); the new build reads an order's status as
// "pending".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2cServer, createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { WebSocketServer } from 'ws';

/**
 * What bb diff finds between the two builds' answers to the random walks (test/helpers/random-walk.ts): a field, a
 * header, a page's markup, an event's level, a chat's room, an order's state, each in every exchange that shows it.
 */
export const NEW_BUILD_CHANGES = [
  'real changed response.body.note',
  'real changed response.body.status',
  'real changed response.body.total',
  'real changed response.events[].data.level',
  'real changed ws.messages[].data.room',
  'real removed response.headers.x-served-by',
] as const;

/** One running build. */
export interface ShadowService {
  url: string;
  /** Requests received, by "METHOD path". */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Starts one build ('old' or 'new'); its orders are numbered from `firstOrder`; with `hangUpOnOrder` its
 * n-th order (from 1) is hung up on unanswered (a flaky instance); with `createDelayMs` it answers a creation
 * that late (a slow instance; the order exists at once). With `h2c` it speaks HTTP/2 over cleartext (prior
 * knowledge) and has no chat; with `tls` (a certificate for localhost) it is https://localhost, h2 or HTTP/1.1 by
 * ALPN, the chat on HTTP/1.1. A JSON answer to a request that accepts gzip is gzipped.
 */
export async function startShadowService(build: 'old' | 'new', firstOrder = 1000, opts: { hangUpOnOrder?: number; createDelayMs?: number; h2c?: boolean; tls?: { key: string; cert: string } } = {}): Promise<ShadowService> {
  let nextOrder = firstOrder;
  let posts = 0;
  const orders = new Set<number>();
  const sessions = new Set<string>();
  const issued = new Set<string>();
  const hits = new Map<string, number>();
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const key = `${req.method} ${path.replace(/\/[0-9a-f]{24}$/, '/{id}')}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body);
      const zipped = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
      res.writeHead(status, { 'content-type': 'application/json', ...(zipped ? { 'content-encoding': 'gzip', vary: 'accept-encoding' } : {}), ...headers });
      res.end(zipped ? gzipSync(text) : text);
    };
    if (path === '/session') {
      const sid = randomBytes(16).toString('base64url');
      sessions.add(sid);
      json(200, { ok: true }, { 'set-cookie': `sid=${sid}; Max-Age=3600; Path=/; HttpOnly` });
      return;
    }
    if (path === '/events') {
      // An event stream that stays open until the client leaves: three events, then silence.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let n = 0;
      const timer = setInterval(() => {
        n++;
        res.write(`data: ${JSON.stringify({ n, at: Date.now(), level: build === 'new' && n === 2 ? 'warn' : 'info' })}\n\n`);
        if (n === 3) clearInterval(timer);
      }, 20);
      req.once('close', () => clearInterval(timer));
      return;
    }
    if (path === '/me') {
      const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      if (!sid || !sessions.has(sid)) return json(401, { error: 'no session' });
      return json(200, { name: 'ada', plan: 'pro' });
    }
    if (path === '/note') {
      // Captured content is hostile input: the new build's note is markup and its link a javascript: URL (the live view shows them as text).
      const note = build === 'new' ? `</script><img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script>` : 'plain';
      return json(200, { note }, { link: '<javascript:window.__pwned="link">; rel=preload' });
    }
    if (path === '/items' && req.method === 'GET') {
      const id = randomBytes(12).toString('hex');
      issued.add(id);
      return json(200, { items: [{ id, name: 'widget' }], total: build === 'new' ? 2 : 1 }, build === 'old' ? { 'x-served-by': 'catalog' } : {});
    }
    // Only ids this server issued exist: a mirror that sent the primary's id would get a 404.
    if (/^\/items\/[0-9a-f]{24}$/.test(path)) return issued.has(path.slice(7)) ? json(200, { id: path.slice(7), name: 'widget', stock: 5 }) : json(404, { error: 'no such item' });
    if (path === '/items' && req.method === 'POST') {
      drain(req);
      return json(201, { id: randomBytes(12).toString('hex') });
    }
    if (path === '/orders' && req.method === 'POST') {
      drain(req);
      if (++posts === opts.hangUpOnOrder) return void res.socket?.destroy();
      orders.add(nextOrder);
      const made = { id: nextOrder++, status: 'open' };
      if (opts.createDelayMs) return void setTimeout(() => json(201, made), opts.createDelayMs);
      return json(201, made);
    }
    // Only orders this server numbered exist: a mirror that sent the primary's number gets a 404.
    const order = /^\/orders\/(\d+)$/.exec(path);
    if (order) return orders.has(Number(order[1])) ? json(200, { id: Number(order[1]), status: build === 'new' ? 'pending' : 'open' }) : json(404, { error: 'no such order' });
    json(404, { error: 'not found' });
  };
  if (opts.h2c || opts.tls) {
    const h2 = opts.tls ? createSecureServer({ ...opts.tls, allowHTTP1: true }, handle) : createH2cServer(handle);
    const sessions = new Set<import('node:http2').ServerHttp2Session>();
    h2.on('session', (s) => (sessions.add(s), s.once('close', () => sessions.delete(s))));
    // Over TLS, HTTP/1.1 connections (the chat's among them) are the compatibility layer's.
    const wss = opts.tls ? chat(build, new WebSocketServer({ noServer: true })) : undefined;
    const sockets = new Set<import('node:net').Socket>();
    if (wss) {
      h2.on('upgrade', (req: IncomingMessage, socket: import('node:net').Socket, head: Buffer) => {
        if ((req.url ?? '').split('?')[0] !== '/chat') return socket.destroy();
        wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
      });
      h2.on('secureConnection', (s: import('node:net').Socket) => (sockets.add(s), s.once('close', () => sockets.delete(s))));
    }
    await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
    const port = (h2.address() as { port: number }).port;
    return {
      url: opts.tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`,
      hits,
      close: async () => {
        for (const c of wss?.clients ?? []) c.terminate();
        wss?.close();
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
        await new Promise<void>((r) => h2.close(() => r()));
      },
    };
  }
  const server: Server = createServer(handle);
  const wss = chat(build, new WebSocketServer({ server, path: '/chat' }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The chat on `wss`: each message echoed, the new build with a changed field. */
function chat(build: 'old' | 'new', wss: WebSocketServer): WebSocketServer {
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const text = data.toString();
      // The new build also marks one late message of a long chat (what only a conversation compared whole shows).
      ws.send(JSON.stringify({ echo: text, room: build === 'new' ? 'lobby-2' : 'lobby', ...(build === 'new' && text === 'm140' ? { late: true } : {}) }));
    });
  });
  return wss;
}

function drain(req: IncomingMessage | Http2ServerRequest): void {
  req.resume();
}
