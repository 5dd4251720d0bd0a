// An app whose new release retired one route behind a framework's 404 page
// (issue 35: "a route replaced by a 404 page: one finding with its
// consequences"). Shared by test/diff/findings-fold.cli.test.ts and the docs'
// outputs (docs/diff.md "Findings"). Loopback, port 0; the caller closes it.
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** The running app: its base URL, the release it answers as, and close(). */
export interface RetiredRouteApp {
  url: string;
  setBuild(b: 'old' | 'new'): void;
  close(): Promise<void>;
}

/** Starts the app ("old" release first): /legacy answers JSON in old and a 404 HTML page in new; other paths the same in both. */
export async function retiredRouteApp(): Promise<RetiredRouteApp> {
  let build: 'old' | 'new' = 'old';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('X-Powered-By', 'Express');
    if (url.pathname === '/legacy' && build === 'new') {
      const page = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Error</title></head><body><pre>Cannot GET ${url.pathname}${url.search}</pre></body></html>\n`;
      res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': "default-src 'none'", 'X-Content-Type-Options': 'nosniff' });
      res.end(page);
      return;
    }
    const id = url.searchParams.get('id');
    const body = url.pathname === '/legacy' ? { id: Number(id), name: `legacy ${id}` } : { ok: true, path: url.pathname };
    const headers: http.OutgoingHttpHeaders = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'max-age=60' };
    if (url.pathname === '/legacy') Object.assign(headers, { ETag: `W/"legacy-${id}"`, 'X-Legacy': 'yes', Vary: 'Accept' });
    res.writeHead(200, headers);
    res.end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setBuild: (b) => (build = b),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The calls each release is driven with, in order (three of them on the retired route). */
export const RETIRED_ROUTE_CALLS: readonly string[] = ['/health', '/legacy?id=1', '/legacy?id=2', '/items', '/legacy?id=3'];
