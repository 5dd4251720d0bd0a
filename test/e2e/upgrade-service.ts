// A small REST service in two versions that differ the way a framework
// upgrade does (the end-to-end findings test): a header renamed on every
// route, a header removed on one, a field removed from list items, a new
// envelope on 404s, a list in another order; ids are random per run in both.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/** A running service version. */
export interface UpgradeService {
  url: string;
  close(): Promise<void>;
}

interface Post {
  id: string;
  title: string;
  legacyId: number;
}

/** Starts version 1 or 2 on 127.0.0.1, port 0. */
export async function startUpgradeService(version: 1 | 2): Promise<UpgradeService> {
  const posts: Post[] = [{ id: randomUUID(), title: 'hello', legacyId: 1 }];
  const tags = ['alpha', 'beta', 'gamma', 'delta'];
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(text)),
      ...(version === 1 ? { 'X-Powered-By': 'shelf' } : { 'X-Served-By': 'shelf' }),
      ...headers,
    });
    res.end(text);
  };
  const notFound = (res: ServerResponse) => send(res, 404, version === 1 ? { error: 'Not Found' } : { error: { code: 404, message: 'Not Found' } });
  const item = (p: Post) => ({ id: p.id, title: p.title, legacyId: p.legacyId });
  // Version 2 leaves the legacy field out of list items only.
  const listItem = (p: Post) => (version === 1 ? item(p) : { id: p.id, title: p.title });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const parts = url.pathname.split('/').filter(Boolean);
    let body = '';
    for await (const c of req) body += c;
    if (req.method === 'POST' && url.pathname === '/posts') {
      const { title } = JSON.parse(body || '{}') as { title?: string };
      const p: Post = { id: randomUUID(), title: title ?? '', legacyId: posts.length + 1 };
      posts.push(p);
      return send(res, 201, item(p), version === 1 ? { Location: `/posts/${p.id}` } : {});
    }
    if (req.method === 'GET' && url.pathname === '/posts') {
      const list = [...posts];
      if (url.searchParams.get('_sort') === 'title') list.sort((a, b) => a.title.localeCompare(b.title));
      return send(res, 200, list.map(listItem));
    }
    if (req.method === 'GET' && parts[0] === 'posts' && parts.length === 2) {
      const p = posts.find((x) => x.id === parts[1]);
      return p ? send(res, 200, item(p)) : notFound(res);
    }
    if (req.method === 'GET' && parts[0] === 'users' && parts.length === 2) return notFound(res);
    if (req.method === 'GET' && url.pathname === '/tags') return send(res, 200, version === 1 ? tags : [...tags].sort());
    return notFound(res);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: 'internal' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The same traffic for each version, through its proxy (the upgrade test and the docs' diff example). */
export async function driveUpgradeService(base: string): Promise<void> {
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
    return (await res.json()) as { id?: string };
  };
  const a = await json('POST', '/posts', { title: 'zebra' });
  const b = await json('POST', '/posts', { title: 'apple' });
  await json('GET', '/posts');
  await json('GET', '/posts?_sort=title');
  await json('GET', `/posts/${a.id}`);
  await json('GET', `/posts/${b.id}`);
  await json('GET', '/posts/nope');
  await json('GET', '/users/nope');
  await json('GET', '/tags');
}
