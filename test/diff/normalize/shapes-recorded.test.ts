// Issue 33 item 2 end to end: a REST app of our own, recorded twice through
// bb's proxy, issues ids nobody reuses (12 hex, nanoid, base62, a numeric
// order id) in create responses and an X-Request-Id header. Two runs of one
// build compare MATCH with no config (generated-ids, numeric-ids); a build
// that issues uuids where it issued 12-hex ids is one real finding; with the
// rules switched off by name the ids differ again. Both stores agree. (Keys
// such as `token` are redacted at capture and compared as <REDACTED:n>.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { mulberry32 } from '../../../core/index.js';
import { renderText, type DiffResult } from '../../../diff/index.js';
import type { Har } from '../../../capture/har.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The app: every create answers a fresh id of its kind; `uuids` is the new build that issues uuids for items. */
async function restApp(cleanups: Cleanups, seed: number, opts: { uuids?: boolean } = {}): Promise<string> {
  const random = mulberry32(seed);
  const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      let body: unknown;
      if (path === '/items') body = { id: opts.uuids ? randomUUID() : pick('0123456789abcdef', 12), name: 'lamp', price: 1299 };
      else if (path === '/users') body = { id: pick(`${B62}_-`, 21), name: 'ada', state: 'IN_STOCK' };
      else if (path === '/tokens') body = { publicId: pick(B62, 22), kind: 'apiKey', scope: 'read_write' };
      else if (path === '/orders') body = { orderId: 10_000 + Math.floor(random() * 90_000), count: 3, total: 3897 };
      else body = { ok: true, version: '1.4.2' };
      const text = JSON.stringify(body);
      res.writeHead(req.method === 'POST' ? 201 : 200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'X-Request-Id': pick('0123456789abcdef', 32),
      });
      res.end(text);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function send(port: number, method: string, path: string, body?: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** One session against the app, recorded through bb: the HAR. */
async function recordRun(seed: number, opts: { uuids?: boolean } = {}): Promise<Har> {
  const cleanups = new Cleanups();
  try {
    const rec = await record(cleanups, await restApp(cleanups, seed, opts));
    for (const path of ['/items', '/items', '/users', '/tokens', '/orders', '/orders']) await send(rec.port, 'POST', path, { name: 'x' });
    await send(rec.port, 'GET', '/health');
    return await rec.finish();
  } finally {
    await cleanups.run();
  }
}

describe('generated ids nobody reuses, recorded twice through bb', () => {
  const t = tempDir();
  const show = (r: DiffResult) => renderText(r, { color: false });
  const real = (r: DiffResult) => r.findings.filter((f) => f.class === 'real').map((f) => `${f.kind} ${f.pattern}`);
  let first: Har;
  let second: Har;

  it('matches two runs of one build with no config', async () => {
    first = await recordRun(1);
    second = await recordRun(2);
    const r = await diffAgreeing(t, first, second);
    assert.equal(r.verdict, 'match', show(r));
    assert.equal(r.counts.real, 0, show(r));
  });

  it('reports a build that issues uuids where it issued 12-hex ids as one real finding', async () => {
    const r = await diffAgreeing(t, first, await recordRun(3, { uuids: true }));
    assert.deepEqual(real(r), ['changed response.body.id'], show(r));
    assert.equal(r.findings[0]!.entries, 2, show(r));
    assert.deepEqual(r.differences.map((d) => `${d.old} → ${d.new}`), ['<HEX12:1> → <UUID:1>', '<HEX12:2> → <UUID:2>']);
  });

  it('compares the ids as they are with generated-ids and numeric-ids switched off by name', async () => {
    const r = await diffAgreeing(t, first, second, { normalize: { disable: ['generated-ids', 'numeric-ids'] } });
    assert.deepEqual(real(r).sort(), ['changed response.body.id', 'changed response.body.id', 'changed response.body.orderId', 'changed response.body.publicId'], show(r));
  });
});
