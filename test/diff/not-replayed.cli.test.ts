// bb diff of a capture and its `bb replay` (docs/diff.md "A replay against
// its original"): a real forward capture of a client talking to two origins
// (the app on 127.0.0.1, a "CDN" on localhost: two servers on port 0) is
// replayed against the app alone. The replay records which original entries
// it skipped (log._bb.replayOf); bb diff leaves exactly those out, says so in
// one line (text, --json, HTML), on the in-memory and the bounded path, and
// leaves nothing out against a capture the replay is not of.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { replayCapture, startCapture } from '../../index.js';
import { diffCaptures, renderHtml, renderJson, renderText, type DiffResult } from '../../diff/index.js';
import type { Har } from '../../capture/index.js';
import { notReplayedText } from '../../diff/not-replayed.js';
import { Cleanups } from '../helpers/cleanups.js';
import { runBb } from '../helpers/cli.js';
import { hexId } from '../helpers/ids.js';
import { tempDir } from '../helpers/tmp.js';
import { diffBounded } from './diff-bounded.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

/** A server on port 0 of `host`; `answer` gets method and path. */
async function serve(host: string, answer: (method: string, path: string) => { status: number; body: string }): Promise<string> {
  const server = http.createServer((req, res) => {
    // The app gone silent for reads of an item: the socket is reset, no response.
    if (app.drop && host === '127.0.0.1' && req.url!.startsWith('/items/')) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => {
      const a = answer(req.method!, req.url!);
      res.writeHead(a.status, { 'Content-Type': a.body.startsWith('{') ? 'application/json' : 'text/plain' }).end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  cleanups.add(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const { port } = server.address() as AddressInfo;
  return `http://${host}:${port}`;
}

/** The app: POST /items makes an id, GET /items/:id reads it back (with `version`, which a test changes). */
const app = { items: new Set<string>(), version: 1, drop: false };
const appAnswer = (method: string, path: string) => {
  if (path === '/') return { status: 200, body: 'home' };
  if (method === 'POST' && path === '/items') {
    const id = `item_${hexId(8)}`;
    app.items.add(id);
    return { status: 201, body: JSON.stringify({ id }) };
  }
  const id = path.slice('/items/'.length);
  return app.items.has(id) ? { status: 200, body: JSON.stringify({ id, version: app.version }) } : { status: 404, body: '{"error":"no such item"}' };
};

/** One request through the forward proxy at `proxy` (absolute-form target, as any client of a forward proxy sends). */
function viaProxy(proxy: string, url: string, method = 'GET', body?: string): Promise<string> {
  const p = new URL(proxy);
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: p.hostname, port: p.port, method, path: url, headers: { Host: u.host, ...(body ? { 'Content-Type': 'application/json' } : {}) }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let appUrl = '';
let cdnUrl = '';

/** A forward capture of a visit: the app three times, the CDN twice, interleaved. */
async function captureVisit(name: string): Promise<string> {
  const capture = await startCapture({ mode: 'forward', out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
  await viaProxy(capture.url, `${appUrl}/`);
  await viaProxy(capture.url, `${cdnUrl}/lib.js`);
  const made = JSON.parse(await viaProxy(capture.url, `${appUrl}/items`, 'POST', '{"name":"a"}')) as { id: string };
  await viaProxy(capture.url, `${cdnUrl}/pixel?p=${made.id}`);
  await viaProxy(capture.url, `${appUrl}/items/${made.id}`);
  return capture.close(2_000);
}

/** Replays `original` against the app alone. */
async function replay(original: string, name: string): Promise<string> {
  const summary = await replayCapture(original, { target: appUrl, out: tmp.path(`${name}.har`), bbHome: tmp.bbHome });
  assert.equal(summary.exitCode, 0, summary.line);
  assert.deepEqual(summary.skipped.map((s) => s.reason.split(' (')[0]), ['another origin', 'another origin'], 'the CDN entries are skipped');
  return summary.out;
}

const NOTE = 'not replayed: 2 entries of 1 other origin (bb replay skipped them)';
const missing = (r: DiffResult) => r.differences.filter((d) => d.kind === 'missing' || d.kind === 'extra');

describe('bb diff ORIGINAL REPLAYED (a replay that skipped another origin)', () => {
  let original = '';
  let replayed = '';
  before(async () => {
    appUrl = await serve('127.0.0.1', appAnswer);
    cdnUrl = await serve('localhost', (_m, path) => ({ status: 200, body: path.startsWith('/lib.js') ? 'lib' : 'ok' }));
    original = await captureVisit('original');
    replayed = await replay(original, 'replayed');
  });

  it('the replayed capture names the original entries it skipped, by index, seq and origin, no URL', async () => {
    const har = JSON.parse(await readFile(replayed, 'utf8')) as Har;
    const of = har.log._bb?.replayOf;
    assert.ok(of, 'log._bb.replayOf is written');
    assert.equal(of.entries, 5);
    assert.deepEqual(of.skipped.map((s) => [s.index, s.reason, s.origin]), [[1, 'origin', cdnUrl], [3, 'origin', cdnUrl]]);
    assert.ok(!JSON.stringify(of).includes('pixel'), 'no URL of a skipped entry is copied');
  });

  it('is MATCH with the one-line note, exit 0 (CLI text and --json)', async () => {
    const run = await runBb(['diff', original, replayed], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^MATCH /);
    assert.ok(run.stdout.includes(NOTE), run.stdout);
    const json = await runBb(['diff', original, replayed, '--json', '-'], env);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as DiffResult;
    assert.equal(report.verdict, 'match');
    assert.deepEqual(report.notReplayed, {
      entries: 2,
      origins: [cdnUrl],
      byReason: { origin: 2 },
      skipped: [{ index: 1, seq: report.notReplayed!.skipped[0]!.seq, origin: cdnUrl, reason: 'origin' }, { index: 3, seq: report.notReplayed!.skipped[1]!.seq, origin: cdnUrl, reason: 'origin' }],
    });
  });

  it('is MATCH with the note on the in-memory and the bounded path (in this thread and in workers), and in the HTML report', async () => {
    for (const [path, r] of [
      ['in memory', await diffCaptures(original, replayed, { views: true })],
      ['bounded', await diffBounded(original, replayed)],
      ['bounded, workers', await diffCaptures(original, replayed, { boundedThreshold: 0 })],
    ] as const) {
      assert.equal(r.verdict, 'match', `${path}: ${renderText(r, { color: false })}`);
      assert.deepEqual(missing(r), [], path);
      assert.equal(r.counts.pairs, 3, `${path}: the three app entries are paired`);
      assert.ok(renderText(r, { color: false }).includes(NOTE), path);
      assert.equal(notReplayedText(r.notReplayed), NOTE, path);
    }
    const html = await renderHtml(await diffCaptures(original, replayed, { views: true }));
    assert.ok(html.includes(NOTE), 'the HTML report says it');
  });

  it('a main origin that answers differently: exactly that finding, the skipped entries still not listed', async () => {
    app.version = 2;
    try {
      const changed = await replay(original, 'replayed-v2');
      for (const r of [await diffCaptures(original, changed), await diffBounded(original, changed)]) {
        assert.equal(r.verdict, 'diff');
        assert.deepEqual(r.findings.filter((f) => f.class === 'real').map((f) => [f.kind, f.pattern]), [['changed', 'response.body.version']], renderText(r, { color: false }));
        assert.deepEqual(missing(r), []);
        assert.ok(renderText(r, { color: false }).includes(NOTE));
      }
      const run = await runBb(['diff', original, changed], env);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.ok(run.stdout.includes(NOTE));
    } finally {
      app.version = 1;
    }
  });

  it('an entry replay sent that got no answer still compares (a finding), the skipped ones still not listed', async () => {
    app.drop = true;
    let summary;
    try {
      summary = await replayCapture(original, { target: appUrl, out: tmp.path('replayed-dropped.har'), bbHome: tmp.bbHome });
    } finally {
      app.drop = false;
    }
    assert.equal(summary.exitCode, 1, summary.line);
    for (const r of [await diffCaptures(original, summary.out), await diffBounded(original, summary.out)]) {
      assert.equal(r.verdict, 'diff');
      const real = r.findings.filter((f) => f.class === 'real');
      assert.ok(real.length > 0 && real.every((f) => f.samples.every((s) => s.request.includes('/items/'))), renderText(r, { color: false }));
      assert.ok(!r.differences.some((d) => d.request?.includes('lib.js') || d.request?.includes('pixel')), 'no row for a skipped entry');
      assert.ok(renderText(r, { color: false }).includes(NOTE));
    }
  });

  it('against a capture the replay is not of, nothing is left out', async () => {
    const other = await captureVisit('unrelated');
    for (const r of [await diffCaptures(other, replayed), await diffBounded(other, replayed)]) {
      assert.equal(r.notReplayed, undefined);
      assert.equal(missing(r).length, 2, renderText(r, { color: false }));
      assert.ok(!renderText(r, { color: false }).includes('not replayed'));
      assert.ok(!renderJson(r).includes('notReplayed'));
    }
  });
});

describe('the not-replayed line', () => {
  it('names tunnels and packets bb could not parse beside other origins', () => {
    const n = { entries: 4, origins: ['https://cdn.test', 'https://stats.test'], byReason: { origin: 2, tunnel: 1, unparsed: 1 }, skipped: [] };
    assert.equal(notReplayedText(n), 'not replayed: 4 entries (2 of 2 other origins, 1 tunnel, 1 packet bb could not parse; bb replay skipped them)');
  });
});
