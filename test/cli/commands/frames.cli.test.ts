// `bb frames` against HARs shaped like Chrome's, Playwright's, mitmproxy's and bb's own.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../helpers/cli.js';
import { entry, har, wsEntry, type Msg } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { sharedFixture } from '../helpers/fixtures.js';

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
