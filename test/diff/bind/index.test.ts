// Issued values whatever their shape (issue 33 item 1): a REST app that makes
// up ids of four shapes (12 hex digits, nanoid, base62, a random integer)
// recorded twice through bb compares MATCH with no config; the entries whose
// paths hold an id pair, so their bodies are compared; an id sent back in a
// form body or a header compares through its binding too; a value that breaks
// its binding is a real `changed`. Both the in-memory and the bounded path.
import { hexId } from '../../helpers/ids.js';
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { randomInt } from 'node:crypto';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';
import type { Har } from '../../../capture/har.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const NANOID = `${BASE62}_-`;
const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('');

/** Ids of each shape, random per run. */
const makers: Record<string, () => string> = {
  hex: () => hexId(),
  nanoid: () => pick(NANOID, 21),
  base62: () => pick(BASE62, 16),
  numeric: () => String(randomInt(10_000, 99_999_999)),
};

/** The app: POST /items makes an item with a fresh id (Location and body), GET/PUT /items/ID, POST /links with the id in JSON, GET /search?item=ID, POST /forms with it in a form body and a header. */
async function app(cleanups: Cleanups): Promise<string> {
  const items = new Map<string, { id: string | number; kind: string; name: string }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = chunks.length && req.headers['content-type'] === 'application/json';
      const body = json ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      const url = new URL(req.url!, 'http://x');
      const send = (status: number, doc: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(doc));
      };
      const m = /^\/items\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'POST' && url.pathname === '/items') {
        const kind = String(body.kind);
        const raw = makers[kind]!();
        const item = { id: kind === 'numeric' ? Number(raw) : raw, kind, name: String(body.name) };
        items.set(raw, item);
        send(201, item, { location: `/items/${raw}` });
      } else if (m && req.method === 'GET') {
        const item = items.get(m[1]!);
        if (!item) send(404, { errors: [{ message: 'Item not found here' }] });
        else send(200, { ...item, note: 'fresh' });
      } else if (m && req.method === 'PUT') {
        const item = items.get(m[1]!)!;
        item.name = String(body.name);
        send(200, item);
      } else if (req.method === 'POST' && url.pathname === '/links') {
        send(201, { linked: body.itemId, ok: true });
      } else if (req.method === 'POST' && url.pathname === '/forms') {
        const sent = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('item');
        send(200, { same: sent === req.headers['x-item'] });
      } else if (req.method === 'GET' && url.pathname === '/search') {
        const id = url.searchParams.get('item')!;
        send(200, { found: items.has(id) ? [items.get(id)!.id] : [] });
      } else send(404, { errors: [{ message: 'No such route' }] });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One request through the proxy; the parsed JSON answer and its Location. */
function call(port: number, method: string, path: string, doc?: unknown, form?: { text: string; headers: Record<string, string> }): Promise<{ body: Record<string, unknown>; location?: string }> {
  return new Promise((resolve, reject) => {
    const payload = form ? form.text : doc === undefined ? undefined : JSON.stringify(doc);
    const headers = form ? { 'content-type': 'application/x-www-form-urlencoded', ...form.headers } : payload ? { 'content-type': 'application/json' } : {};
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ body: JSON.parse(text) as Record<string, unknown>, ...(res.headers.location ? { location: res.headers.location } : {}) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** One run of the scenario, recorded through bb: each kind of id created, then used in a path, a JSON body, a query, a form body and a header. */
async function recordRun(cleanups: Cleanups, target: string): Promise<Har> {
  const rec = await record(cleanups, target);
  for (const kind of Object.keys(makers)) {
    const made = await call(rec.port, 'POST', '/items', { kind, name: `a ${kind}` });
    const path = made.location!;
    const id = String(made.body.id);
    await call(rec.port, 'GET', path);
    await call(rec.port, 'PUT', path, { id: made.body.id, name: `b ${kind}` });
    await call(rec.port, 'POST', '/links', { itemId: id });
    await call(rec.port, 'GET', `/search?item=${encodeURIComponent(id)}`);
    await call(rec.port, 'POST', '/forms', undefined, { text: new URLSearchParams({ item: id, note: 'x' }).toString(), headers: { 'x-item': id } });
  }
  return rec.finish();
}

/** The entries whose path starts with /items/, in file order. */
const itemEntries = (har: Har) => har.log.entries.filter((e) => /\/items\/[^/]+$/.test(new URL(e.request.url).pathname));

describe('issued values whatever their shape (diff/bind)', () => {
  const cleanups = new Cleanups();
  const dir = tempDir(cleanups);
  let a: Har;
  let b: Har;
  before(async () => {
    const target = await app(cleanups);
    a = await recordRun(cleanups, target);
    b = await recordRun(cleanups, target);
  });
  after(() => cleanups.run());

  it('two runs of one build compare MATCH with no config, the /items/ID entries paired', async () => {
    const r = await diffAgreeing(dir, a, b);
    assert.deepEqual(r.differences.filter((d) => d.class === 'real').map((d) => `${d.id} ${d.path} ${d.kind}`), []);
    assert.equal(r.verdict, 'match');
    const itemPairs = r.pairs.filter((p) => / \/items\/./.test(p.route));
    // 4 kinds × (GET + PUT), every one paired.
    assert.equal(itemPairs.length, 8);
    assert.ok(itemPairs.every((p) => p.status === 'paired'), JSON.stringify(itemPairs));
  });

  it('binds an id sent back in a form body and a header: with issued-values off, the numeric one differs there', async () => {
    const r = await diffAgreeing(dir, a, b, { normalize: { disable: ['issued-values'] } });
    const forms = r.differences.filter((d) => d.class === 'real' && d.route === 'POST /forms').map((d) => `${d.kind} ${d.path}`);
    // The numeric id at least (no shape rule covers digits in a form body or a header); others as their shapes allow.
    assert.deepEqual([...new Set(forms)].sort(), ['changed request.body', 'changed request.headers.x-item'], forms.join('\n'));
  });

  it('compares the bodies of entries whose paths hold an id: one changed field is exactly that finding', async () => {
    const changed = structuredClone(b);
    const get = itemEntries(changed).find((e) => e.request.method === 'GET' && e.response.content.text?.includes('"hex"'))!;
    get.response.content.text = get.response.content.text!.replace('"note":"fresh"', '"note":"stale"');
    const r = await diffAgreeing(dir, a, changed);
    const real = r.differences.filter((d) => d.class === 'real');
    assert.deepEqual(real.map((d) => `${d.path} ${d.kind} ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`), ['response.body.note changed "fresh" → "stale"']);
    assert.equal(r.verdict, 'diff');
  });

  it('reports a value that breaks its binding (X ↔ Y, then X ↔ Z) as a real change', async () => {
    const broken = structuredClone(b);
    // The new client GETs the nanoid item by the hex item's id (issued before): old nanoid X ↔ new nanoid Y
    // where they were made, but here old X ↔ new hex id Z.
    const made = broken.log.entries.filter((e) => e.request.method === 'POST' && e.request.url.endsWith('/items'));
    const hexId = JSON.parse(made[0]!.response.content.text!).id as string;
    const nanoId = JSON.parse(made[1]!.response.content.text!).id as string;
    const get = itemEntries(broken).find((e) => e.request.method === 'GET' && e.request.url.includes(nanoId))!;
    get.request.url = get.request.url.replace(nanoId, hexId);
    const r = await diffAgreeing(dir, a, broken);
    const real = r.differences.filter((d) => d.class === 'real');
    const rows = real.map((d) => `${d.path} ${d.kind} ${JSON.stringify(d.old)} → ${JSON.stringify(d.new)}`);
    assert.ok(rows.includes('request.path changed "/items/<ISSUED:2>" → "/items/<ISSUED:1>"'), rows.join('\n'));
    // The binding holds everywhere else: only that entry's request differs.
    assert.deepEqual(new Set(real.map((d) => d.request)).size, 1, rows.join('\n'));
    assert.equal(r.verdict, 'diff');
  });
});
