// Past the body cap, compared by hash (issue 37 item 6): two builds of a
// server on loopback send bodies and WebSocket messages longer than a small
// --body-cap that differ only past it; each is recorded by a real proxy, and
// the real `bb diff` finds the difference (one finding saying so), while the
// same bytes past the cap are a MATCH. HTTP/1.1 request and response bodies,
// WebSocket messages both ways (masked, and permessage-deflate inflated), and
// an h2 response body.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { h2Client, h2Request, h2Server } from '../helpers/h2-peers.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import type { Har } from '../../capture/har.js';
import { startShadow } from '../../index.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir(cleanups);

const CAP = 1024;
/** 4000 bytes, the same in every build up to the last one: `tail` is its last byte. */
const big = (tail: string) => 'a'.repeat(3999) + tail;

/** A build: HTTP/1.1 routes and two WebSocket paths (/ws plain, /wsz permessage-deflate), answering with `tail`. */
async function build(tail: string): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'text/plain');
      if (req.url === '/late') res.end(big(tail));
      else if (req.url === '/same') res.end(big('z'));
      else if (req.url === '/longer') res.end(tail === 'x' ? big('z') : big('z') + 'more');
      else if (req.url === '/json') {
        // A JSON body cut mid-value: the kept prefix does not parse, and compares as text.
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ i, name: `item ${i}` })), last: tail }));
      }
      else res.end(`got ${Buffer.concat(chunks).length}`);
    });
  });
  const plain = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const deflate = new WebSocketServer({ noServer: true, perMessageDeflate: { threshold: 0 } });
  for (const wss of [plain, deflate]) {
    wss.on('connection', (ws) => ws.on('message', (data, isBinary) => {
      const text = data.toString();
      if (text === 'late') ws.send(big(tail));
      else if (text === 'same') ws.send(big('z'));
      else ws.send(`got ${isBinary ? 'binary' : 'text'} ${text.length}`);
    }));
  }
  server.on('upgrade', (req, socket, head) => {
    const wss = req.url === '/wsz' ? deflate : plain;
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => new Promise<void>((r) => {
    for (const wss of [plain, deflate]) for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    server.close(() => r());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One WebSocket conversation: each message sent, its answer awaited. */
async function converse(url: string, messages: string[], deflate: boolean): Promise<void> {
  const ws = new WebSocket(url, { perMessageDeflate: deflate ? { threshold: 0 } : false });
  await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  for (const m of messages) {
    const answer = new Promise((r) => ws.once('message', r));
    ws.send(m);
    await answer;
  }
  ws.close(1000);
  await new Promise((r) => ws.once('close', r));
}

/** Records the traffic of one build through a capture with --body-cap 1 KiB; the HAR's path. */
async function recordBuild(name: string, tail: string, bbHome: string, redact: boolean): Promise<{ file: string; har: Har }> {
  const target = await build(tail);
  const rec = await record(cleanups, target, { bodyCap: CAP, bbHome, label: name, ...(redact ? {} : { redact: false }) });
  const base = `http://127.0.0.1:${rec.port}`;
  for (const path of ['/late', '/same', '/longer', '/json']) await (await fetch(base + path)).text();
  await (await fetch(base + '/upload', { method: 'POST', body: big(tail), headers: { 'content-type': 'text/plain' } })).text();
  const wsBase = `ws://127.0.0.1:${rec.port}`;
  await converse(`${wsBase}/ws`, ['late', 'same', big(tail)], false);
  await converse(`${wsBase}/wsz`, ['late', big(tail)], true);
  const har = await rec.finish();
  const file = tmp.path(`${name}.har`);
  await writeFile(file, JSON.stringify(har));
  return { file, har };
}

/** bb diff's JSON result: its verdict and each real finding's field pattern. */
async function diff(a: string, b: string): Promise<{ code: number; stdout: string; patterns: string[]; rows: Array<{ path: string; old?: unknown; new?: unknown }> }> {
  const json = tmp.path(`diff-${Math.random().toString(36).slice(2)}.json`);
  const r = await runBb(['diff', a, b, '--json', json]);
  assert.ok(r.code === 0 || r.code === 1, `bb diff failed: ${r.stderr}`);
  const result = JSON.parse(await (await import('node:fs/promises')).readFile(json, 'utf8')) as {
    findings: Array<{ class: string; pattern: string }>;
    differences: Array<{ class: string; path: string; old?: unknown; new?: unknown }>;
  };
  return {
    code: r.code,
    stdout: r.stdout,
    patterns: result.findings.filter((f) => f.class === 'real').map((f) => f.pattern).sort(),
    rows: result.differences.filter((d) => d.class === 'real'),
  };
}

describe('bodies past the body cap compare by size and hash', () => {
  const home = join(tmp.dir, 'home');

  it('records the hash of the bytes past the cap, and finds a difference there that bb diff missed', async () => {
    const old = await recordBuild('old', 'x', home, true);
    const same = await recordBuild('same', 'x', home, true);
    const changed = await recordBuild('new', 'y', home, true);

    const late = old.har.log.entries.find((e) => e.request.url.endsWith('/late'))!;
    assert.equal(late._bb?.truncated?.response, CAP);
    assert.equal(late.response.bodySize, 4000);
    // Redacted capture: keyed, so a short rest cannot be found by trying values.
    assert.match(late._bb?.restHash?.response ?? '', /^hmac-sha256:[0-9a-f]{8}:[0-9a-f]{64}$/);
    const upload = old.har.log.entries.find((e) => e.request.url.endsWith('/upload'))!;
    assert.match(upload._bb?.restHash?.request ?? '', /^hmac-sha256:/);
    const small = old.har.log.entries.find((e) => e.request.url.endsWith('/longer'))!;
    assert.equal(small._bb?.restHash?.response === undefined, false, 'a 4000-byte body is past the 1 KiB cap too');
    const ws = old.har.log.entries.find((e) => e.request.url.endsWith('/ws'))!;
    const cut = ws._webSocketMessages!.filter((m) => m._bb?.truncated !== undefined);
    assert.equal(cut.length, 3, 'late and same from the server, the big one from the client');
    for (const m of cut) assert.match(m._bb?.restHash ?? '', /^hmac-sha256:/);
    const wsz = old.har.log.entries.find((e) => e.request.url.endsWith('/wsz'))!;
    const inflated = wsz._webSocketMessages!.filter((m) => m._bb?.truncated !== undefined);
    assert.equal(inflated.length, 2);
    assert.ok(inflated.every((m) => m._bb?.compressed && m._bb.restHash), JSON.stringify(inflated.map((m) => m._bb)));

    const equal = await diff(old.file, same.file);
    assert.equal(equal.code, 0, `${equal.stdout}\n${JSON.stringify(equal.rows)}`);
    assert.match(equal.stdout, /^MATCH /);

    const found = await diff(old.file, changed.file);
    assert.equal(found.code, 1, found.stdout);
    assert.deepEqual(found.patterns, [
      'request.truncated.hash',
      'response.truncated.hash',
      'response.truncated.size',
      'ws.messages[].data.truncated.hash',
    ].sort(), found.stdout);
    // One row per message or body past the cap, saying so, never the two hashes.
    const hashRows = found.rows.filter((r) => r.path.endsWith('truncated.hash'));
    assert.equal(hashRows.length, 3 + 4, JSON.stringify(found.rows));
    for (const r of hashRows) {
      assert.equal(r.old, 'the bytes past the cap');
      assert.equal(r.new, 'other bytes past the cap (compared by hash)');
    }
    const size = found.rows.find((r) => r.path === 'response.truncated.size')!;
    assert.deepEqual([size.old, size.new], [4000, 4004]);
    assert.match(found.stdout, /truncated\.hash/);
  });

  it('records an unkeyed SHA-256 with --no-redact, and compares only hashes of one scheme', async () => {
    const plain = await recordBuild('plain', 'x', home, false);
    const late = plain.har.log.entries.find((e) => e.request.url.endsWith('/late'))!;
    const { createHash } = await import('node:crypto');
    assert.equal(late._bb?.restHash?.response, `sha256:${createHash('sha256').update(big('x').slice(CAP)).digest('hex')}`);
    const keyed = await recordBuild('keyed', 'y', home, true);
    // Hashes of other schemes say nothing about each other: not compared, as before hashes existed.
    const r = await diff(plain.file, keyed.file);
    assert.deepEqual(r.patterns.filter((p) => p.includes('hash')), [], r.stdout);
  });

  it('finds a difference past the cap of an h2 response body', async () => {
    const files: string[] = [];
    for (const [name, tail] of [['h2old', 'x'], ['h2same', 'x'], ['h2new', 'y']] as const) {
      const server = await h2Server(cleanups, (stream: http2.ServerHttp2Stream) => {
        stream.respond({ ':status': 200, 'content-type': 'text/plain' });
        stream.end(big(tail));
      });
      const rec = await record(cleanups, server.url, { bodyCap: CAP, bbHome: home, label: name });
      const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
      const res = await h2Request(session, { ':path': '/late', ':method': 'GET' });
      assert.equal(res.body.length, 4000);
      session.close();
      const har = await rec.finish();
      assert.match(har.log.entries[0]!._bb?.restHash?.response ?? '', /^hmac-sha256:/, JSON.stringify(har.log.entries[0]!._bb));
      const file = tmp.path(`${name}.har`);
      await writeFile(file, JSON.stringify(har));
      files.push(file);
    }
    const equal = await diff(files[0]!, files[1]!);
    assert.equal(equal.code, 0, equal.stdout);
    const found = await diff(files[0]!, files[2]!);
    assert.deepEqual(found.patterns, ['response.truncated.hash'], found.stdout);
  });

  it('bb shadow: a candidate that differs only past the cap is a regression, the same bytes are equal', async () => {
    const [primary, candidate, secondary] = [await build('x'), await build('y'), await build('x')];
    const shadow = await startShadow({ primary, candidate, secondary, outDir: tmp.path('shadow'), bodyCap: CAP, bbHome: home });
    for (const path of ['/late', '/same']) await (await fetch(shadow.url + path)).text();
    const report = await shadow.close();
    assert.equal(report.totals.mirrored, 2, JSON.stringify(report.totals));
    assert.deepEqual(report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['regression changed response.truncated.hash'], JSON.stringify(report.findings));
    assert.equal(report.routes['GET /late']?.regressions, 1, JSON.stringify(report.routes));
    assert.equal(report.routes['GET /same']?.equal, 1, JSON.stringify(report.routes));
  });
});

// A conversation's budget (capture/recorder.ts wsRoom): a direction keeps its messages' bytes while they fit in
// --ws-budget; from the first message that does not, each message keeps its size and a hash of its payload. The
// budget keeps a long conversation's entry one a reader can parse (without it, 9,000 messages of 64 KiB made a
// 787 MB entry no reader could open), and bb diff still compares every message past it, by hash.
describe('messages past a conversation\'s budget compare by size and hash', () => {
  const home = join(tmp.dir, 'home-budget');
  const BUDGET = 10_000;
  /** Server messages: 12 of 1,000 bytes (`tail` in the 11th), then a short one; the client's: 3 short ones. */
  async function conversation(name: string, tail: string, redact: boolean, bodyCap?: number, wsBudget = BUDGET): Promise<{ file: string; har: Har }> {
    const server = http.createServer();
    const wss = new WebSocketServer({ server, perMessageDeflate: { threshold: 0 } });
    wss.on('connection', (ws) => ws.on('message', (data) => {
      if (data.toString() !== 'go') return void ws.send(`echo ${data.toString()}`);
      for (let i = 0; i < 12; i++) ws.send(i === 10 ? 'b'.repeat(999) + tail : 'b'.repeat(1000));
      ws.send('end');
    }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate();
      server.close(() => r());
    }));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, { wsBudget, bbHome: home, label: name, ...(bodyCap ? { bodyCap } : {}), ...(redact ? {} : { redact: false }) });
    const ws = new WebSocket(`ws://127.0.0.1:${rec.port}/chat`, { perMessageDeflate: { threshold: 0 } });
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    let got = 0;
    const all = new Promise<void>((r) => ws.on('message', () => ++got === 14 && r()));
    ws.send('hi');
    ws.send('go');
    await all;
    ws.close(1000);
    await new Promise((r) => ws.once('close', r));
    const har = await rec.finish();
    const file = tmp.path(`${name}.har`);
    await writeFile(file, JSON.stringify(har));
    return { file, har };
  }

  it('keeps the bytes of the messages within it and the size and hash of those past it; bb diff finds a change past it', async () => {
    const { createHash } = await import('node:crypto');
    const plain = await conversation('budget-plain', 'x', false);
    const received = plain.har.log.entries[0]!._webSocketMessages!.filter((m) => m.type === 'receive' && m.opcode === 1);
    assert.equal(received.length, 14);
    // "echo hi" (7 bytes) and nine messages of 1,000 fit in 10,000 bytes; the tenth does not.
    const kept = received.filter((m) => m._bb?.truncated === undefined);
    assert.deepEqual(kept.map((m) => m.data.length), [7, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]);
    const past = received.filter((m) => m._bb?.truncated !== undefined);
    // Every later message, the short last one too (a budget once passed stays passed, whatever the sizes after).
    assert.deepEqual(past.map((m) => [m.data, m._bb!.truncated, m._bb!.size]), [...Array(3).fill(['', 0, 1000]), ['', 0, 3]]);
    assert.equal(past[1]!._bb!.restHash, `sha256:${createHash('sha256').update('b'.repeat(999) + 'x').digest('hex')}`, 'the hash of the whole payload (inflated)');
    // The client's direction has its own budget: its messages are whole.
    assert.ok(plain.har.log.entries[0]!._webSocketMessages!.filter((m) => m.type === 'send' && m.opcode === 1).every((m) => m._bb?.truncated === undefined));

    const old = await conversation('budget-old', 'x', true);
    const same = await conversation('budget-same', 'x', true);
    const changed = await conversation('budget-new', 'y', true);
    const equal = await diff(old.file, same.file);
    assert.equal(equal.code, 0, `${equal.stdout}\n${JSON.stringify(equal.rows)}`);
    const found = await diff(old.file, changed.file);
    assert.equal(found.code, 1, found.stdout);
    assert.deepEqual(found.patterns, ['ws.messages[].data.truncated.hash'], found.stdout);
    assert.equal(found.rows.length, 1, JSON.stringify(found.rows));
  });

  it('compares a message cut at the body cap and past the budget by one hash of its kept bytes and its rest', async () => {
    // --body-cap 500: the tap hands over each 1,000-byte message's first 500 bytes and a hash of the rest. A budget
    // of 2,000 bytes: "echo hi" and three such starts fit; the nine other messages of 1,000 and "end" do not.
    const old = await conversation('cut-old', 'x', true, 500, 2000);
    const past = old.har.log.entries[0]!._webSocketMessages!.filter((m) => m.type === 'receive' && m._bb?.truncated === 0);
    assert.equal(past.length, 10, JSON.stringify(old.har.log.entries[0]!._webSocketMessages!.map((m) => m._bb)));
    assert.ok(past.slice(0, 9).every((m) => /^hmac-sha256:/.test(m._bb!.restHash ?? '') && m._bb!.size === 1000), 'a hash for each cut message past the budget');
    const same = await conversation('cut-same', 'x', true, 500, 2000);
    const changed = await conversation('cut-new', 'y', true, 500, 2000);
    assert.equal((await diff(old.file, same.file)).code, 0);
    const found = await diff(old.file, changed.file);
    assert.deepEqual([found.code, found.patterns, found.rows.length], [1, ['ws.messages[].data.truncated.hash'], 1], found.stdout);
  });
});
