// A second small service for bb shadow's probes of realistic traffic, on
// loopback: two builds ("old": primary and secondary; "new": candidate) whose
// orders are numbered from each build's own start (1000, 5000, 9000: plain
// numbers, which bind only by their use) and whose session cookie rotates on
// every answer (only the latest one is accepted). An order is created as JSON
// (201, and a Location when asked: `?located`), as a form, or by a GraphQL mutation, and read by path,
// by query string, by form, by GraphQL (POST, and GET with URL-encoded variables), through a redirect chain, gzipped
// (a bulk creation's answer past 256 KiB too),
// with HEAD and a CORS preflight. The new build reads an order's status as
// "pending" (the real change every probe must find). Every answer a target
// gave that says it did not know a value (401, 404) is counted in `refused`.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { gzipSync, brotliCompressSync } from 'node:zlib';

/** One running build. */
export interface Shop {
  url: string;
  /** Requests this build refused for an unknown order or session ("METHOD target status"). */
  refused: string[];
  close(): Promise<void>;
}

/** Starts one build; its orders are numbered from `firstOrder`. */
export async function startShop(build: 'old' | 'new', firstOrder: number): Promise<Shop> {
  let next = firstOrder;
  const orders = new Set<number>();
  let session: string | undefined;
  const refused: string[] = [];
  const status = build === 'new' ? 'pending' : 'open';
  const server: Server = createServer((req, res) => {
    void body(req).then((text) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const path = url.pathname;
      const refuse = (code: number) => {
        refused.push(`${req.method} ${req.url} ${code}`);
        send(res, code, { error: code === 401 ? 'no session' : 'no such order' });
      };
      // The session rotates: every answer sets a new one; only the latest is accepted.
      if (path === '/login') return rotate(res), send(res, 200, { ok: true });
      if (path.startsWith('/s/')) {
        const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
        if (!sid || sid !== session) return refuse(401);
        rotate(res);
      }
      const p = path.replace(/^\/s/, '');
      const read = (id: number, extra: Record<string, string> = {}) => (orders.has(id) ? send(res, 200, { id, status }, extra, req) : refuse(404));
      if (p === '/orders' && req.method === 'POST') {
        const id = create();
        // `?located=v2`: the new build moved its orders under /v2 in the Location (a real change of it; reads still work at /orders).
        const under = url.searchParams.get('located') === 'v2' && build === 'new' ? '/v2' : '';
        return send(res, 201, { id, status: 'created' }, url.searchParams.has('located') ? { location: `${under}/orders/${id}` } : {}, req);
      }
      if (p === '/bulk-orders' && req.method === 'POST') {
        // A big answer (a receipt of random bytes after the new order's id): gzipped, past 256 KiB.
        const id = create();
        return send(res, 201, { id, receipt: randomBytes(300 * 1024).toString('base64') }, {}, req);
      }
      if (p === '/form-orders' && req.method === 'POST') {
        const id = create();
        return send(res, 201, { id, qty: Number(new URLSearchParams(text).get('qty')) }, {}, req);
      }
      if (p === '/order-form' && req.method === 'POST') return read(Number(new URLSearchParams(text).get('order')));
      if (p === '/order') return read(Number(url.searchParams.get('order')));
      if (p === '/graphql' && req.method === 'POST') return graphql(res, text, refuse);
      // A GraphQL query over GET (Apollo's persisted queries): its variables URL-encoded JSON in the query string.
      if (p === '/graphql') return graphql(res, JSON.stringify({ query: url.searchParams.get('query'), variables: JSON.parse(url.searchParams.get('variables') ?? '{}') }), refuse);
      let m = /^\/go\/(\d+)$/.exec(p);
      if (m) return redirect(res, `/via/${m[1]}`);
      m = /^\/via\/(\d+)$/.exec(p);
      if (m) return orders.has(Number(m[1])) ? redirect(res, `/orders/${m[1]}`) : refuse(404);
      m = /^\/orders\/(\d+)$/.exec(p);
      if (m && req.method === 'OPTIONS') {
        res.writeHead(204, { 'access-control-allow-origin': req.headers.origin ?? '*', 'access-control-allow-methods': 'GET, DELETE', 'access-control-max-age': '600' });
        return void res.end();
      }
      if (m) return read(Number(m[1]));
      send(res, 404, { error: 'not found' });
    });
  });

  function create(): number {
    orders.add(next);
    return next++;
  }

  function rotate(res: ServerResponse): void {
    session = randomBytes(12).toString('base64url');
    res.setHeader('set-cookie', `sid=${session}; Path=/; Expires=${new Date(Date.now() + 3600_000).toUTCString()}; HttpOnly`);
  }

  function graphql(res: ServerResponse, text: string, refuse: (code: number) => void): void {
    const q = JSON.parse(text) as { query: string; variables?: { id?: string } };
    if (q.query.startsWith('mutation')) return send(res, 200, { data: { createOrder: { id: String(create()) } } });
    const id = Number(q.variables?.id);
    if (!orders.has(id)) return refuse(404);
    send(res, 200, { data: { order: { id: String(id), status } } });
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    refused,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, 'content-length': '0' });
  res.end();
}

/** JSON, gzip- or br-encoded when the client accepts it. */
function send(res: ServerResponse, code: number, value: unknown, headers: Record<string, string> = {}, req?: IncomingMessage): void {
  const raw = Buffer.from(JSON.stringify(value));
  const accept = req?.headers['accept-encoding'] ?? '';
  const coding = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : undefined;
  const bytes = coding === 'br' ? brotliCompressSync(raw) : coding === 'gzip' ? gzipSync(raw) : raw;
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': String(bytes.length), ...(coding ? { 'content-encoding': coding } : {}), ...headers });
  if (req?.method === 'HEAD') return void res.end();
  res.end(bytes);
}
