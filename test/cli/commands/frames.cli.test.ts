// `bb frames` against HARs shaped like Chrome's, Playwright's, mitmproxy's and bb's own.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runBb, startBb, type BbProcess } from '../../helpers/cli.js';
import { entry, har, wsEntry, type Msg } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { sharedFixture } from '../../helpers/fixtures.js';

/** bb run to its end at the width the expected lines are laid out for. */
const bb = (args: string[], env: NodeJS.ProcessEnv = {}) => runBb(args, { COLUMNS: '100', ...env });

const t0 = Date.parse('2024-05-01T10:00:00.000Z') / 1000;
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

// Chrome: epoch seconds, no seq; two messages share a time (position decides), one is written out of order.
const chromeMessages: Msg[] = [
  { type: 'send', time: t0 + 0.5, opcode: 1, data: 'hello' },
  { type: 'receive', time: t0 + 0.5, opcode: 1, data: 'world' },
  { type: 'receive', time: t0 + 2, opcode: 8, data: b64(Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')])) },
  { type: 'send', time: t0 + 1, opcode: 2, data: b64(Buffer.from([0, 1, 2, 255])) },
  { type: 'receive', time: t0 + 1.5, opcode: 9, data: b64('ping!') },
];
const chrome = har([
  entry('https://app.test/api/items', '2024-05-01T10:00:00.100Z'),
  wsEntry('wss://app.test/live', '2024-05-01T10:00:00.000Z', chromeMessages, { connection: '4711' }),
]);
// Playwright: the same messages with times in epoch milliseconds, no connection field.
const playwright = har([wsEntry('ws://127.0.0.1:5000/pw', '2024-05-01T10:00:00.000Z', chromeMessages.map((m) => ({ ...m, time: m.time * 1000 })))]);
// bb: seq decides over time; a close with decoded code; an error row; an HTTP exchange between messages.
const bbHar = har([
  wsEntry('ws://127.0.0.1:4000/chat', '2024-05-01T10:00:00.000Z', [
    { type: 'receive', time: t0 + 0.3, opcode: 1, data: 'second by seq', _bb: { seq: 4, frames: 1, compressed: true } },
    { type: 'send', time: t0 + 0.4, opcode: 1, data: 'first by seq\nline two\u001b[31m', _bb: { seq: 2, frames: 3, compressed: false } },
    { type: 'error', time: t0 + 0.9, opcode: -1, data: 'Invalid WebSocket frame: invalid opcode 3', _bb: { seq: 7, error: 'WS_ERR_INVALID_OPCODE', direction: 'receive' } },
    { type: 'send', time: t0 + 0.8, opcode: 8, data: b64(Buffer.from([0x0f, 0xa0, 0x62])), _bb: { seq: 6, code: 4000, reason: 'b' } },
  ], { connection: 'c1', _bb: { seq: 1 } }),
  entry('http://127.0.0.1:4000/api/state', '2024-05-01T10:00:00.200Z', { connection: 'c2', _bb: { seq: 3, seqEnd: 5 } }),
], { _bb: { format: 1, label: 'new', target: 'http://127.0.0.1:3000', listen: 'http://127.0.0.1:4000', startedDateTime: '2024-05-01T10:00:00.000Z', endedDateTime: '2024-05-01T10:00:01.000Z', complete: true, counts: { entries: 2, webSocketMessages: 4 } } });

describe('bb frames', () => {
  const files = tempDir();
  const path: Record<string, string> = {};
  before(async () => {
    path.chrome = await files.write('chrome.har', chrome);
    path.playwright = await files.write('playwright.har', playwright);
    path.bb = await files.write('bb.har', bbHar);
    path.broken = await files.write('broken.har', '{"log": {"entries": [');
    path.long = await files.write('long.har', har([wsEntry('ws://x.test/', '2024-05-01T10:00:00.000Z', [{ type: 'send', time: t0, opcode: 1, data: 'y'.repeat(5000) }])]));
  });

  it('lists a Chrome export in time order, then position, with time since the connection opened', async () => {
    const run = await bb(['frames', path.chrome!]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^connection 4711 {2}#1 {2}wss:\/\/app\.test\/live {2}\(5 messages\)$/);
    const rows = lines.slice(1).map((l) => l.trim().split(/\s+/).slice(0, 5).join(' '));
    assert.deepEqual(rows, [
      '- +0.500s → text 5B',
      '- +0.500s ← text 5B',
      '- +1.000s → binary 4B',
      '- +1.500s ← ping 5B',
      '- +2.000s ← close 5B',
    ]);
    assert.match(lines[1]!, /hello$/);
    assert.match(lines[3]!, /0x000102ff$/);
    assert.match(lines[5]!, /1000 bye$/);
    assert.doesNotMatch(run.stdout, /\u001b\[/, 'no colour when piped');
  });

  it('reads Playwright millisecond times like Chrome seconds', async () => {
    const [pw, ch] = await Promise.all([bb(['frames', path.playwright!]), bb(['frames', path.chrome!])]);
    assert.equal(pw.code, 0, pw.stderr);
    const body = (out: string) => out.split('\n').slice(1).join('\n');
    assert.equal(body(pw.stdout), body(ch.stdout));
    assert.match(pw.stdout, /^connection 0 {2}#0 {2}ws:\/\/127\.0\.0\.1:5000\/pw/, 'the entry index names a connection without a connection field');
    const doc = JSON.parse((await bb(['frames', path.playwright!, '--json'])).stdout);
    assert.deepEqual(doc.connections[0].messages.map((m: Msg) => m.time), [t0 + 0.5, t0 + 0.5, t0 + 1, t0 + 1.5, t0 + 2]);
  });

  it('orders bb captures by seq, escapes control characters and marks error rows', async () => {
    const run = await bb(['frames', path.bb!]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n').slice(1);
    assert.deepEqual(lines.map((l) => l.trim().split(/\s+/)[0]), ['2', '4', '6', '7']);
    assert.ok(lines[0]!.endsWith('first by seq\\nline two\\x1b[31m'), lines[0]);
    assert.match(lines[2]!, /→ close .* 4000 b$/);
    assert.match(lines[3]!, /← error +WS_ERR_INVALID_OPCODE: Invalid WebSocket frame/);
  });

  it('prints --json as one document with full payloads and HAR message objects', async () => {
    const run = await bb(['frames', path.bb!, '--json']);
    assert.equal(run.code, 0, run.stderr);
    const doc = JSON.parse(run.stdout);
    assert.deepEqual(Object.keys(doc), ['connections']);
    const [c] = doc.connections;
    assert.deepEqual([c.id, c.url, c.entry], ['c1', 'ws://127.0.0.1:4000/chat', 0]);
    assert.deepEqual(c.messages.map((m: Msg) => m._bb!['seq']), [2, 4, 6, 7]);
    assert.deepEqual(c.messages[0], { type: 'send', time: t0 + 0.4, opcode: 1, data: 'first by seq\nline two\u001b[31m', _bb: { seq: 2, frames: 3, compressed: false } });
    const long = JSON.parse((await bb(['frames', path.long!, '--json'])).stdout);
    assert.equal(long.connections[0].messages[0].data.length, 5000);
  });

  it('fits lines to the width and clips long payloads', async () => {
    const run = await bb(['frames', path.long!], { COLUMNS: '60' });
    const line = run.stdout.trimEnd().split('\n')[1]!;
    assert.equal([...line].length, 60);
    assert.ok(line.endsWith('y…'));
  });

  it('colours only when asked (FORCE_COLOR) and never with NO_COLOR', async () => {
    assert.match((await bb(['frames', path.bb!], { FORCE_COLOR: '1', NO_COLOR: undefined })).stdout, /\u001b\[/);
    assert.doesNotMatch((await bb(['frames', path.bb!], { FORCE_COLOR: '1', NO_COLOR: '1' })).stdout, /\u001b\[/);
  });

  const filters: Array<[string[], string[]]> = [
    [['--type', 'receive'], ['world', 'ping!', '1000 bye']],
    [['--opcode', 'binary,close'], ['0x000102ff', '1000 bye']],
    [['--opcode', '9'], ['ping!']],
    [['--grep', '^w.r'], ['world']],
    [['--conn', '4711', '--type', 'send'], ['hello', '0x000102ff']],
    [['--conn', '1', '--type', 'send'], ['hello', '0x000102ff']],
    [['--url', 'wss://*/live', '--grep', 'hel+o'], ['hello']],
  ];
  for (const [args, expected] of filters) {
    it(`filters with ${args.join(' ')}`, async () => {
      const run = await bb(['frames', path.chrome!, ...args]);
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trimEnd().split('\n');
      assert.match(lines[0]!, new RegExp(`#1  wss://app\\.test/live  \\(${expected.length} of 5 messages\\)`));
      assert.deepEqual(lines.slice(1).map((l) => l.split(/  +/).at(-1)), expected);
    });
  }

  it('prints nothing for a connection filter that matches nothing, and a --json document still', async () => {
    const run = await bb(['frames', path.chrome!, '--url', '*nowhere*']);
    assert.deepEqual([run.code, run.stdout], [0, '']);
    assert.deepEqual(JSON.parse((await bb(['frames', path.chrome!, '--url', '*nowhere*', '--json'])).stdout), { connections: [] });
  });

  it('interleaves HTTP entries and messages by seq with --timeline', async () => {
    const run = await bb(['frames', path.bb!, '--timeline', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const { events } = JSON.parse(run.stdout);
    assert.deepEqual(
      events.map((e: { kind: string; seq?: number; message?: Msg }) => `${e.kind}:${e.seq ?? e.message?._bb?.['seq']}`),
      ['request:1', 'ws:2', 'request:3', 'ws:4', 'response:5', 'ws:6', 'ws:7'],
    );
    const text = await bb(['frames', path.bb!, '--timeline']);
    const kinds = text.stdout.trimEnd().split('\n').map((l) => (l.includes('▶') ? 'req' : l.includes('◀') ? 'res' : 'ws'));
    assert.deepEqual(kinds, ['req', 'ws', 'req', 'ws', 'res', 'ws', 'ws']);
    assert.match(text.stdout, /◀ http 200 GET http:\/\/127\.0\.0\.1:4000\/api\/state/);
  });

  it('interleaves by time without seq (Chrome), responses at start + time', async () => {
    const { events } = JSON.parse((await bb(['frames', path.chrome!, '--timeline', '--json'])).stdout);
    assert.deepEqual(
      events.map((e: { kind: string; url: string; message?: Msg }) => (e.kind === 'ws' ? `ws:${e.message!.data.slice(0, 5)}` : `${e.kind}:${e.url.split('/').pop()}`)),
      ['request:live', 'request:items', 'response:items', 'ws:hello', 'ws:world', `ws:${chromeMessages[3]!.data.slice(0, 5)}`, 'ws:cGluZ', `ws:${chromeMessages[2]!.data.slice(0, 5)}`],
    );
  });

  it("reads mitmproxy's WebSocket export", async (t) => {
    const MITM = sharedFixture(t, 'mitmproxy-websocket.har');
    if (!MITM) return;
    const run = await bb(['frames', MITM]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.split('\n').filter((l) => l.startsWith('connection ')).length, 3);
    assert.match(run.stdout, /→ text +3B {2}foo\n.*→ text +3B {2}bar\n$/);
    const doc = JSON.parse((await bb(['frames', MITM, '--json'])).stdout);
    assert.equal(doc.connections.flatMap((c: { messages: Msg[] }) => c.messages).length, 5);
    assert.deepEqual(doc.connections[2].messages.map((m: Msg) => m.data), ['{"error":"Unknown api key"}', 'foo', 'bar']);
  });

  // Firefox and mitmproxy keep an event stream's body whole: its events are read from it (the parser bb's
  // capture and diff use), at the response's end, having no times of their own; an empty body is a stream of none.
  it('reads an event stream another tool kept as its body text, and lists one whose body it did not keep', async (t) => {
    const text = 'event: hello\ndata: {"a":1}\n\n: a comment\ndata: second\ndata: line\nid: 7\n\ndata: cut, no blank line';
    const sse = (body: { text?: string; encoding?: string }) => entry('https://app.test/feed', '2024-05-01T10:00:00.000Z', {
      time: 250,
      response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Content-Type', value: 'text/event-stream' }], content: { size: 60, mimeType: 'text/event-stream; charset=utf-8', ...body }, redirectURL: '', headersSize: -1, bodySize: -1 },
    });
    const file = await files.write('sse-body.har', har([sse({ text }), sse({ text: b64(text), encoding: 'base64' })]));
    const run = await bb(['frames', file]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.deepEqual(lines.filter((l) => l.startsWith('sse stream ')).map((l) => l.split(/\s+/).slice(0, 3).join(' ')), ['sse stream #0', 'sse stream #1']);
    const rows = lines.filter((l) => /← sse/.test(l)).map((l) => l.trim().split(/\s{2,}/).slice(1).join(' | '));
    assert.deepEqual(rows.slice(0, 2), ['+0.250s ← sse | 7B | event hello: {"a":1}', '+0.250s ← sse | 11B | message id 7: second\\nline']);
    assert.equal(rows.length, 4);
    const doc = JSON.parse((await bb(['frames', file, '--json'])).stdout);
    assert.deepEqual(doc.connections[1].messages.map((m: Msg) => m.data), ['{"a":1}', 'second\nline']);

    const MITM = sharedFixture(t, 'mitmproxy-event-stream.har');
    if (!MITM) return;
    const mitm = await bb(['frames', MITM]);
    assert.equal(mitm.code, 0, mitm.stderr);
    assert.equal(mitm.stdout.split('\n').filter((l) => /^sse stream #\d+ .*\(0 events; ended by the server\)$/.test(l)).length, 2, mitm.stdout);
  });

  it('refuses a broken file and a bad option with exit 2 and one line', async () => {
    const broken = await bb(['frames', path.broken!]);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /^bb: .*broken\.har is not valid JSON.*\n$/);
    const badOpcode = await bb(['frames', path.chrome!, '--opcode', 'texty']);
    assert.equal(badOpcode.code, 2);
    assert.match(badOpcode.stderr, /^bb: --opcode takes text, binary, ping, pong, close, error or numbers, got 'texty'\n$/);
    const badGrep = await bb(['frames', path.chrome!, '--grep', '(']);
    assert.equal(badGrep.code, 2);
    assert.match(badGrep.stderr, /^bb: --grep needs a valid regular expression/);
  });
});

// `bb frames --follow` tails a capture journal (format: capture/journal.ts) as it grows,
// and ends when the journal goes away (a clean stop renames it into the HAR).
const ts = Date.parse('2024-05-01T10:00:00.000Z');

/** Writes journal + bodies the way capture's JournalAppender lays them out. */
class FakeJournal {
  constructor(readonly out: string) {
    writeFileSync(`${out}.bodies`, '');
    writeFileSync(`${out}.journal`, '');
  }
  record(rec: Record<string, unknown>): void {
    appendFileSync(`${this.out}.journal`, JSON.stringify(rec) + '\n');
  }
  body(bytes: Buffer): { o: number; n: number; w: number } {
    const o = statSync(`${this.out}.bodies`).size;
    appendFileSync(`${this.out}.bodies`, bytes);
    return { o, n: bytes.length, w: bytes.length };
  }
  message(x: number, seq: number, d: 'send' | 'receive', op: number, payload: Buffer, extra: Record<string, unknown> = {}): void {
    this.record({ r: 'wsm', x, ts: ts + seq, seq, d, op, ...this.body(payload), f: 1, z: false, ...extra });
  }
}

/** The whole lines bb has printed so far (a line still being written is not one yet). */
function lines(bb: BbProcess): { readonly all: string[]; until(n: number): Promise<void> } {
  const whole = () => bb.stdout().split('\n').slice(0, -1);
  return {
    get all() {
      return whole();
    },
    async until(n) {
      for (let i = 0; i < 300 && whole().length < n; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(whole().length >= n, `expected ${n} lines, got ${JSON.stringify(whole())}`);
    },
  };
}

describe('bb frames --follow', () => {
  it('prints what is journaled, then each message as it arrives, one JSON object per line', async () => {
    const tmp = tempDir();
    const out = join(tmp.dir, 'live.har');
    const j = new FakeJournal(out);
    j.record({ r: 'bb-journal', v: 1, label: 'new', target: 'http://127.0.0.1:3000', listen: 'http://127.0.0.1:4000', startedDateTime: new Date(ts).toISOString(), bodyCap: 1024, redact: false, creator: { name: 'bb', version: '0' } });
    j.record({ r: 'start', x: 1, seq: 1, c: 'c1', ts, scheme: 'http', method: 'GET', target: '/chat', v: '1.1', h: ['Host', '127.0.0.1:4000', 'Upgrade', 'websocket'], up: 'http://127.0.0.1:3000', upg: true });
    j.record({ r: 'upg', x: 1, ts: ts + 1, st: 101, sm: 'Switching Protocols', v: '1.1', h: ['Upgrade', 'websocket'] });
    j.message(1, 2, 'send', 1, Buffer.from('hello'));

    const child = startBb(['frames', out, '--follow', '--json']);
    const got = lines(child);
    await got.until(1);
    j.message(1, 3, 'receive', 2, Buffer.from([0, 255]));
    j.record({ r: 'wse', x: 1, ts: ts + 4, seq: 4, d: 'receive', code: 'WS_ERR_INVALID_OPCODE', msg: 'Invalid WebSocket frame: invalid opcode 3' });
    // A torn line (no newline yet) waits for the rest.
    const close = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')]);
    const slice = j.body(close);
    const closeLine = JSON.stringify({ r: 'wsm', x: 1, ts: ts + 5, seq: 5, d: 'send', op: 8, ...slice, f: 1, z: false, cc: 1000, cr: 'bye' });
    appendFileSync(`${out}.journal`, closeLine.slice(0, 20));
    await got.until(3);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(got.all.length, 3, 'the torn line is not printed yet');
    appendFileSync(`${out}.journal`, closeLine.slice(20) + '\n');
    await got.until(4);
    // The clean stop: the journal goes away, following ends.
    rmSync(`${out}.journal`);
    assert.equal(await child.exited, 0);

    const objects = got.all.map((l) => JSON.parse(l));
    assert.deepEqual(objects.map((o) => [o.kind, o.connection, o.url, o.message.type, o.message.opcode, o.message.data]), [
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'send', 1, 'hello'],
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'receive', 2, 'AP8='],
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'error', -1, 'Invalid WebSocket frame: invalid opcode 3'],
      ['ws', 'c1', 'http://127.0.0.1:4000/chat', 'send', 8, close.toString('base64')],
    ]);
    assert.deepEqual(objects[3].message._bb, { seq: 5, frames: 1, compressed: false, code: 1000, reason: 'bye' });
    assert.equal(objects[0].message.time, (ts + 2) / 1000);
  });

  it('prints text lines with filters, HTTP entries with --timeline, and stops on SIGINT', async () => {
    const tmp = tempDir();
    const out = join(tmp.dir, 'live.har');
    const j = new FakeJournal(out);
    j.record({ r: 'bb-journal', v: 1, label: 'x', target: 'http://127.0.0.1:3000', listen: 'http://127.0.0.1:4000', startedDateTime: new Date(ts).toISOString(), bodyCap: 1024, redact: false, creator: { name: 'bb', version: '0' } });
    j.record({ r: 'start', x: 1, seq: 1, c: 'c1', ts, scheme: 'http', method: 'GET', target: '/ws', v: '1.1', h: ['Host', 'h.test'], up: 'http://127.0.0.1:3000', upg: true });
    j.message(1, 2, 'send', 1, Buffer.from('keep me'));
    j.message(1, 3, 'send', 1, Buffer.from('drop me'));
    j.record({ r: 'start', x: 2, seq: 4, c: 'c2', ts: ts + 4, scheme: 'http', method: 'POST', target: '/api', v: '1.1', h: ['Host', 'h.test'], up: 'http://127.0.0.1:3000', upg: false });
    j.record({ r: 'rs', x: 2, ts: ts + 5, st: 201, sm: 'Created', v: '1.1', h: [] });
    j.record({ r: 'done', x: 2, ts: ts + 6, seq: 5, tr: [] });
    const child = startBb(['frames', out, '--follow', '--timeline', '--grep', 'keep'], { COLUMNS: '100' });
    const got = lines(child);
    await got.until(4);
    child.child.kill('SIGINT');
    assert.equal(await child.exited, 0);
    assert.equal(got.all.length, 4);
    assert.match(got.all[3]!, /^ +5 #4 +\+0\.006s ◀ http 201 POST http:\/\/h\.test\/api$/);
    assert.match(got.all[0]!, /^ +1 #1 +\+0\.000s ▶ http GET http:\/\/h\.test\/ws$/);
    assert.match(got.all[1]!, /^ +2 c1 +\+0\.002s → text +7B {2}keep me$/);
    assert.match(got.all[2]!, /^ +4 #4 +\+0\.004s ▶ http POST http:\/\/h\.test\/api$/);
  });

  it('prints the finished HAR when the capture has already stopped, and refuses a path with neither', async () => {
    const tmp = tempDir();
    const none = startBb(['frames', join(tmp.dir, 'nothing.har'), '--follow']);
    assert.equal(await none.exited, 2);
    assert.match(none.stderr(), /^bb: no running capture at .*nothing\.har/);
    const done = await tmp.write('done.har', har([wsEntry('ws://h.test/x', '2024-05-01T10:00:00.000Z', [{ type: 'send', time: ts / 1000, opcode: 1, data: 'over' }])]));
    const finished = startBb(['frames', done, '--follow']);
    const got = lines(finished);
    assert.equal(await finished.exited, 0);
    assert.match(got.all[0]!, /^connection 0 {2}#0 {2}ws:\/\/h\.test\/x/);
    assert.match(got.all[1]!, /→ text +4B {2}over$/);
  });
});
