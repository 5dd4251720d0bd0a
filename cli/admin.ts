// The admin endpoint: a loopback-only HTTP server on its own port that lets
// any driver mark steps (HAR pages) and read counts. The proxied ports never
// answer these routes. Requests from web pages (a foreign Host or Origin: DNS
// rebinding, cross-origin POSTs) get 403 before any route, recorded nowhere.
//
//   POST /step   {"name": "create session", "label"?: "old"}  → 200 {"ok":true,"labels":[...]}
//   GET  /status                                             → 200 {"captures":[{label,url,out,...counts}]}
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BbError, foreignRequestReason, isLoopbackHost, listenFailureWhy } from '../core/index.js';
import type { ListenAddress } from './listen.js';

/** What the admin endpoint controls: one entry per proxy of this process. */
export interface AdminTarget {
  label: string;
  url: string;
  out: string;
  step(name: string): void;
  stats(): object;
}

/** A running admin endpoint. */
export interface AdminServer {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Refuses an --admin address other machines could reach. */
export function checkAdminAddress(address: ListenAddress): void {
  if (!isLoopbackHost(address.host)) {
    throw new BbError('BB_ADMIN_NOT_LOOPBACK', `--admin must bind a loopback address like 127.0.0.1:${address.port || 9000}; '${address.host}' would let others mark steps`);
  }
}

/** Starts the admin endpoint; refuses any non-loopback address. */
export async function startAdmin(address: ListenAddress, targets: AdminTarget[]): Promise<AdminServer> {
  checkAdminAddress(address);
  let port = address.port; // the bound one once listening (address.port may be 0)
  const server = http.createServer((req, res) => {
    const refusal = foreignRequestReason(req.headersDistinct, port);
    if (refusal) {
      res.setHeader('Connection', 'close'); // the body, if any, is not read
      reply(res, 403, { error: refusal });
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/status') {
      reply(res, 200, { captures: targets.map((t) => ({ label: t.label, url: t.url, out: t.out, ...t.stats() })) });
      return;
    }
    if (req.method === 'POST' && path === '/step') {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          reply(res, 413, { error: 'body too large' });
          req.destroy();
        } else chunks.push(c);
      });
      req.on('end', () => {
        let body: { name?: unknown; label?: unknown };
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        } catch {
          reply(res, 400, { error: 'the body must be JSON like {"name": "create session"}' });
          return;
        }
        if (typeof body.name !== 'string' || body.name.trim() === '') {
          reply(res, 400, { error: 'POST /step needs {"name": "<step name>"} with a non-empty string name' });
          return;
        }
        if (body.label !== undefined && typeof body.label !== 'string') {
          reply(res, 400, { error: '"label" must be a string naming one proxy' });
          return;
        }
        const chosen = body.label === undefined ? targets : targets.filter((t) => t.label === body.label);
        if (chosen.length === 0) {
          reply(res, 404, { error: `no proxy labelled '${String(body.label)}'; labels: ${targets.map((t) => t.label).join(', ')}` });
          return;
        }
        for (const t of chosen) t.step(body.name);
        reply(res, 200, { ok: true, step: body.name, labels: chosen.map((t) => t.label) });
      });
      return;
    }
    reply(res, 404, { error: 'admin routes: POST /step, GET /status' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new BbError('BB_ADMIN_LISTEN', `cannot listen on --admin ${address.host}:${address.port}: ${listenFailureWhy(err, '--admin')}`)),
    );
    server.listen(address.port, address.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  port = a.port;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
