// A browser's visit, recorded by bb and replayed against the same build:
// headless Debian chromium loads a page that creates an item and reads it
// back by the id the server made up, once over HTTP/1.1 (bb capture in front
// of the app: chromium's mixed-case header names) and once over h2 (bb's
// forward proxy to an h2-only HTTPS app). bb replay re-drives each capture
// against a fresh instance: bb diff of the two captures is MATCH with the
// default config (the id followed), and the app's own log of each request
// head (line and fields, in case and order, as it parsed them) is the one it
// logged for the browser, but for Host/:authority and the id.
// Skipped when chromium is absent.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startCapture } from '../../index.js';
import { startRecording } from '../../scenario/index.js';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { CHROMIUM, chromiumLaunchOptions, forwardProxyFlags } from '../helpers/browser-app.js';
import { Cleanups } from '../helpers/cleanups.js';
import { runBb } from '../helpers/cli.js';
import { hexId } from '../helpers/ids.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>loading</title><link rel="icon" href="data:,"></head><body><script>
(async () => {
  const made = await (await fetch('/items', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Client-Trace': 'page-1' }, body: JSON.stringify({ name: 'from the browser' }) })).json();
  const got = await fetch('/items/' + made.id);
  document.title = 'done ' + got.status;
})();
</script></body></html>`;

/** An instance of the app: each request's head as it parsed it ("METHOD path" then "name: value" lines), in arrival order. */
interface App {
  url: string;
  heads: string[];
}

/** Answers one request of the app: the page, POST /items (a fresh id), GET /items/:id (404 for an id it never made). */
function answer(items: Set<string>, method: string, path: string): { status: number; type: string; body: string } {
  if (path === '/') return { status: 200, type: 'text/html; charset=utf-8', body: PAGE };
  if (method === 'POST' && path === '/items') {
    const id = `item_${hexId(8)}`;
    items.add(id);
    return { status: 201, type: 'application/json', body: JSON.stringify({ id }) };
  }
  const id = path.startsWith('/items/') ? path.slice('/items/'.length) : '';
  if (items.has(id)) return { status: 200, type: 'application/json', body: JSON.stringify({ id, name: 'from the browser' }) };
  return { status: 404, type: 'application/json', body: '{"error":"no such item"}' };
}

/** A head as a log line per field, names as received. */
const headLog = (line: string, raw: string[]): string => [line, ...raw.flatMap((v, i) => (i % 2 === 0 ? [`${v}: ${raw[i + 1]}`] : []))].join('\n');

/** The app over HTTP/1.1 on 127.0.0.1:0. */
async function h1App(): Promise<App> {
  const items = new Set<string>();
  const heads: string[] = [];
  const server = http.createServer((req, res) => {
    heads.push(headLog(`${req.method} ${req.url} HTTP/${req.httpVersion}`, req.rawHeaders));
    req.resume();
    req.on('end', () => {
      const a = answer(items, req.method!, req.url!);
      res.writeHead(a.status, { 'Content-Type': a.type, 'Cache-Control': 'no-store' }).end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heads };
}

/** The app over h2 only (no HTTP/1.1 fallback), TLS with `pem`, on localhost. */
async function h2App(pem: { keyPem: string; chainPem: string }): Promise<App> {
  const items = new Set<string>();
  const heads: string[] = [];
  const server = http2.createSecureServer({ key: pem.keyPem, cert: pem.chainPem, allowHTTP1: false });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s));
  server.on('stream', (stream, headers, _flags, raw) => {
    const method = String(headers[':method']);
    const path = String(headers[':path']);
    heads.push(headLog(`${method} ${path} h2`, raw));
    stream.on('error', () => {});
    stream.resume();
    stream.on('end', () => {
      const a = answer(items, method, path);
      stream.respond({ ':status': a.status, 'content-type': a.type, 'cache-control': 'no-store' });
      stream.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => {
    for (const s of sessions) s.destroy();
    return new Promise((r) => server.close(r));
  });
  return { url: `https://localhost:${(server.address() as AddressInfo).port}`, heads };
}

/** Loads `url` in chromium (with `args`) and waits for the page to have read its item back. */
async function visit(url: string, args: string[] = []): Promise<void> {
  const browser = await chromium.launch({ ...chromiumLaunchOptions(args), timeout: 30_000 });
  try {
    const page = await browser.newPage();
    await page.goto(url, { timeout: 30_000 });
    await page.waitForFunction(() => document.title.startsWith('done'), undefined, { timeout: 15_000 });
    assert.equal(await page.title(), 'done 200');
  } finally {
    await browser.close();
  }
}

/** A head log with the parts that follow the target (Host, :authority) and the app's id made equal. */
const comparable = (head: string): string =>
  head.replace(/^(host|:authority): .*$/gim, '$1: TARGET').replace(/item_[0-9a-f]{16}/g, 'ID');

/** Replays `original` against `fresh`, then checks the diff and the heads the two instances logged. */
async function replayAndCompare(t: { diagnostic(m: string): void }, original: string, first: App, fresh: App, name: string, extraEnv: Record<string, string> = {}): Promise<void> {
  const out = tmp.path(`${name}-replay.har`);
  const run = await runBb(['replay', original, '--target', fresh.url, '--out', out], { ...env, ...extraEnv });
  assert.equal(run.code, 0, run.stdout + run.stderr);
  t.diagnostic(run.stdout.trim());
  const diff = await runBb(['diff', original, out], env);
  assert.equal(diff.code, 0, diff.stdout + diff.stderr);
  assert.match(diff.stdout, /^MATCH/);
  assert.deepEqual(fresh.heads.map(comparable), first.heads.map(comparable));
  t.diagnostic(first.heads[1]!);
}

describe('a browser capture replayed against the same build', () => {
  it('over HTTP/1.1: chromium’s mixed-case head reaches the fresh instance as it reached the first; bb diff is MATCH', async (t) => {
    if (!CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
    const first = await h1App();
    const rec = await startRecording({ target: first.url, out: tmp.path('browser-h1.har'), label: 'browser-h1', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      await visit(`${rec.url}/`);
    } finally {
      await rec.close(1000);
    }
    assert.deepEqual(first.heads.map((h) => h.split('\n')[0]!.replace(/item_[0-9a-f]+/, 'ID')), ['GET / HTTP/1.1', 'POST /items HTTP/1.1', 'GET /items/ID HTTP/1.1']);
    assert.match(first.heads[1]!, /\nX-Client-Trace: page-1\n/);
    assert.match(first.heads[1]!, /\nUser-Agent: /, 'chromium writes mixed-case names over HTTP/1.1');
    await replayAndCompare(t, rec.out, first, await h1App(), 'browser-h1');
  });

  it('over h2: the streams reach the fresh instance with the browser’s headers in order; bb diff is MATCH', async (t) => {
    if (!CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
    const ca = await loadOrCreateCa(tmp.path('app-ca'));
    const caFile = tmp.path('app-ca.pem');
    await writeFile(caFile, ca.certPem);
    const pem = await createLeafFactory(ca).pemFor('localhost');
    const first = await h2App(pem);
    const capture = await startCapture({ mode: 'forward', out: tmp.path('browser-h2.har'), label: 'browser-h2', bbHome: tmp.bbHome, upstreamTls: { extraCa: [ca.certPem] } });
    let out: string;
    try {
      // Chromium's own calls home (update checks, sign-in pings) go around bb: the capture is the app's visit.
      // Not needed for MATCH any more (bb replay skips them and bb diff leaves them out, "not replayed: …";
      // tried without it: MATCH with 3 entries of 3 other origins not replayed); kept because it is quicker.
      const flags = (await forwardProxyFlags(capture.url, tmp.bbHome)).map((f) => (f.startsWith('--proxy-bypass-list=') ? `${f};*.google.com;*.googleapis.com;*.gstatic.com;*.gvt1.com` : f));
      await visit(`${first.url}/`, flags);
    } finally {
      out = await capture.close(2000);
    }
    assert.deepEqual(first.heads.map((h) => h.split('\n')[0]!.replace(/item_[0-9a-f]+/, 'ID')), ['GET / h2', 'POST /items h2', 'GET /items/ID h2']);
    await replayAndCompare(t, out, first, await h2App(pem), 'browser-h2', { NODE_EXTRA_CA_CERTS: caFile });
  });
});
