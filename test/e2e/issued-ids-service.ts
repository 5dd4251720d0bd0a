// A small REST app that issues random ids of every common shape (issue 33
// targets): a session cookie of 32 hex digits with Max-Age and Expires, notes
// under 12-hex ids, files under nanoids, short links under base62 slugs,
// orders under 7-digit numbers, a request-id header nobody echoes (32 hex
// digits, as nginx's $request_id: a shorter hex value with no letter, one in
// 2000 for 16 digits, reads as another shape, docs/diff.md), and
// epoch-ms times under short keys. Every id is new in every run; each later
// request carries it back (path, cookie, JSON body). Versions differ the way
// an upgrade does, one change each: 2 drops the cookie's Max-Age, answers
// POST /links 200 instead of 201, no longer sends X-Content-Type-Options on a
// note, reports version "2.0" and a limit of 100; 3 is 2 regressed (POST
// /links 500, version "2.1", limit 99). A noisy app varies run to run where
// no built-in rule can know it: the cookie's Max-Age (what is left of a
// fixed lifetime), the worker that answered, and a load figure.
import { hexId } from '../helpers/ids.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { Cleanups } from '../helpers/cleanups.js';

/** Which build of the app runs. */
export type IdsVersion = 1 | 2 | 3;

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const NANOID = `${BASE62}_-`;
/** `n` random characters of `alphabet`. */
const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');
const hex12 = () => hexId();
const nanoid = () => pick(NANOID, 21);
const base62 = () => pick(BASE62, 8);
const numericId = () => randomInt(1_000_000, 10_000_000);

/** Runs started so far: what the noisy app's noise is made of. */
let noisyRuns = 0;

/** Starts one version on 127.0.0.1:0 (closed by `cleanups`), noisy or not; its base URL. */
export async function startIdsApp(cleanups: Cleanups, version: IdsVersion, noisy = false): Promise<string> {
  // Noise differs at every place between any two runs (a run counter, not chance, so no place is equal by luck) and
  // per response within a run (so it never reads as one issued value); Max-Age has 3 digits (never an issued number).
  const run = ++noisyRuns;
  let answered = 0;
  const worker = () => (noisy ? `worker-${'abcdefgh'[(run + answered++) % 8]}` : 'worker-a');
  const sessions = new Set<string>();
  const notes = new Map<string, { id: string; title: string; t: number }>();
  const files = new Map<string, { key: string; name: string; size: number }>();
  const links = new Map<string, { slug: string; url: string }>();
  const orders = new Map<number, { orderId: number; items: number; noteId: string }>();
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': randomBytes(16).toString('hex'), 'X-Served-By': worker(), ...headers });
    res.end(text);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const c of req) text += c;
    const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const url = new URL(req.url ?? '/', 'http://x');
    const [top, id] = url.pathname.split('/').filter(Boolean);
    if (req.method === 'POST' && top === 'login') {
      const sid = randomBytes(16).toString('hex');
      sessions.add(sid);
      const attrs = ['Path=/', ...(version === 1 ? [`Max-Age=${noisy ? 600 + run : 3600}`] : []), `Expires=${new Date(Date.now() + 3_600_000).toUTCString()}`, 'HttpOnly', 'SameSite=Lax'];
      return send(res, 200, { user: body.user, t: Date.now() }, { 'Set-Cookie': `sid=${sid}; ${attrs.join('; ')}` });
    }
    const sid = /(?:^|; )sid=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
    if (!sid || !sessions.has(sid)) return send(res, 401, { error: 'sign in first' });
    if (req.method === 'POST' && top === 'notes') {
      const note = { id: hex12(), title: String(body.title), t: Date.now() };
      notes.set(note.id, note);
      return send(res, 201, note, { Location: `/notes/${note.id}` });
    }
    if (req.method === 'GET' && top === 'notes' && id) {
      const note = notes.get(id);
      if (!note) return send(res, 404, { error: 'no such note' });
      return send(res, 200, note, version === 1 ? { 'X-Content-Type-Options': 'nosniff' } : {});
    }
    if (req.method === 'POST' && top === 'files') {
      const file = { key: nanoid(), name: String(body.name), size: 42 };
      files.set(file.key, file);
      return send(res, 201, file);
    }
    if (req.method === 'GET' && top === 'files' && id) return files.has(id) ? send(res, 200, files.get(id)) : send(res, 404, { error: 'no such file' });
    if (req.method === 'POST' && top === 'links') {
      const link = { slug: base62(), url: String(body.url) };
      links.set(link.slug, link);
      return send(res, version === 1 ? 201 : version === 2 ? 200 : 500, link);
    }
    if (req.method === 'GET' && top === 'links' && id) return links.has(id) ? send(res, 200, links.get(id)) : send(res, 404, { error: 'no such link' });
    if (req.method === 'POST' && top === 'orders') {
      const order = { orderId: numericId(), items: Number(body.items), noteId: String(body.noteId) };
      orders.set(order.orderId, order);
      return send(res, 201, order);
    }
    if (req.method === 'GET' && top === 'orders' && id) {
      const order = orders.get(Number(id));
      return order ? send(res, 200, { ...order, note: notes.get(order.noteId) }) : send(res, 404, { error: 'no such order' });
    }
    if (req.method === 'GET' && top === 'meta') {
      return send(res, 200, { version: ['1.4', '2.0', '2.1'][version - 1], limit: [50, 100, 99][version - 1], notes: notes.size, trace: randomUUID(), load: noisy ? (run % 100) / 100 : 0.5 });
    }
    return send(res, 404, { error: 'not found' });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 500, { error: 'internal' }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One user's session against `base` (bb's proxy): the same calls for every version, each id sent back where the app wants it. */
export async function driveIdsApp(base: string): Promise<void> {
  let cookie = '';
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(cookie ? { cookie } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const set = res.headers.getSetCookie();
    if (set.length > 0) cookie = set.map((c) => c.split(';')[0]).join('; ');
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status === 401 || res.status === 404) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await call('POST', '/login', { user: 'ann' });
  const note = await call('POST', '/notes', { title: 'groceries' });
  await call('GET', `/notes/${note.id}`);
  const file = await call('POST', '/files', { name: 'a.txt' });
  await call('GET', `/files/${file.key}`);
  const link = await call('POST', '/links', { url: 'https://example.com/x' });
  await call('GET', `/links/${link.slug}`);
  const order = await call('POST', '/orders', { items: 3, noteId: note.id });
  await call('GET', `/orders/${order.orderId}`);
  await call('GET', '/meta');
}
