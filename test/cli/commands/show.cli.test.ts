// `bb show` against hand-made HARs and mitmproxy's WebSocket export.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../../helpers/cli.js';
import { entry, har, wsEntry } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { sharedFixture } from '../../helpers/fixtures.js';

/** bb run to its end at the width the expected lines are laid out for. */
const bb = (args: string[], env: NodeJS.ProcessEnv = {}) => runBb(args, { COLUMNS: '100', ...env });


// Written out of order: seq puts the POST first although its startedDateTime is later.
const capture = har(
  [
    entry('http://127.0.0.1:4000/api/items?page=2', '2024-05-01T10:00:00.500Z', { _bb: { seq: 3 }, pageref: 'p2' }),
    entry('http://127.0.0.1:4000/api/login', '2024-05-01T10:00:01.000Z', { method: 'POST', status: 401, _bb: { seq: 1 }, pageref: 'p1' }),
    wsEntry('ws://127.0.0.1:4000/live', '2024-05-01T10:00:00.200Z', [
      { type: 'send', time: 1714557600.3, opcode: 1, data: 'hi', _bb: { seq: 4 } },
      { type: 'receive', time: 1714557600.4, opcode: 1, data: 'ho', _bb: { seq: 5 } },
    ], { _bb: { seq: 2 }, pageref: 'p1', connection: 'c3' }),
    entry('http://127.0.0.1:4000/api/items', '2024-05-01T10:00:02.000Z', { status: 502, _bb: { seq: 6, error: { code: 'ECONNREFUSED', message: 'refused', phase: 'connect' } }, pageref: 'p2' }),
  ],
  {
    pages: [
      { id: 'p1', title: 'sign in', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} },
      { id: 'p2', title: 'browse', startedDateTime: '2024-05-01T10:00:00.400Z', pageTimings: {} },
    ],
  },
);

describe('bb show', () => {
  const files = tempDir();
  let file = '';
  before(async () => {
    file = await files.write('capture.har', capture);
  });

  it('prints one line per entry in seq order: #seq, time, method, status, sizes, duration, page, ws count, url', async () => {
    const run = await bb(['show', file]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^# +time +method +status +size +wire +ms +page +ws +url$/);
    const cells = lines.slice(1).map((l) => l.trim().split(/\s+/));
    assert.deepEqual(cells.map((c) => c[0]), ['#1', '#2', '#3', '#6']);
    assert.deepEqual(cells[0], ['#1', '+0.800s', 'POST', '401', '42B', '40B', '12', 'sign', 'in', 'http://127.0.0.1:4000/api/login']);
    assert.deepEqual(cells[1]!.slice(0, 4), ['#2', '+0.000s', 'GET', '101']);
    assert.deepEqual(cells[1]!.slice(-3), ['in', '2', 'ws://127.0.0.1:4000/live']);
    assert.deepEqual(cells[3]!.slice(3, 4), ['502!']);
    assert.ok(lines.every((l) => [...l].length <= 100), 'fits COLUMNS');
    assert.match(lines[4]!, /\/api\/items {2}\(ECONN\w*…$/, 'clipped to the width');
    const wide = await bb(['show', file], { COLUMNS: '160' });
    assert.match(wide.stdout.trimEnd().split('\n')[4]!, /\/api\/items {2}\(ECONNREFUSED\)$/);
  });

  const filters: Array<[string[], number[]]> = [
    [['--method', 'post'], [1]],
    [['--status', '4xx'], [1]],
    [['--status', '101,5xx'], [2, 6]],
    [['--url', '*/api/items*'], [3, 6]],
    [['--page', 'browse'], [3, 6]],
    [['--page', 'p1'], [1, 2]],
    [['--ws'], [2]],
    [['--method', 'GET', '--page', 'browse', '--status', '2xx'], [3]],
  ];
  for (const [args, seqs] of filters) {
    it(`filters with ${args.join(' ')}`, async () => {
      const run = await bb(['show', file, ...args, '--json']);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout).entries.map((r: { seq: number }) => r.seq), seqs);
    });
  }

  it('prints --json as one document of entry rows', async () => {
    const run = await bb(['show', file, '--ws', '--json']);
    const doc = JSON.parse(run.stdout);
    assert.deepEqual(doc, {
      entries: [{
        entry: 2, seq: 2, startedDateTime: '2024-05-01T10:00:00.200Z', time: 1714557600.2, method: 'GET',
        url: 'ws://127.0.0.1:4000/live', status: 101, statusText: '', requestBodySize: 0, responseBodySize: 40,
        contentSize: 42, duration: 12, page: 'sign in', connection: 'c3', webSocket: true, webSocketMessages: 2,
      }],
    });
  });

  it('says so on stderr when nothing matches, and refuses a bad --status', async () => {
    const none = await bb(['show', file, '--method', 'DELETE']);
    assert.equal(none.code, 0);
    assert.equal(none.stdout.trimEnd().split('\n').length, 1, 'only the header');
    assert.match(none.stderr, /^bb: no entries match --method DELETE\n$/);
    const bad = await bb(['show', file, '--status', 'teapot']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^bb: --status takes codes or classes like 404, 4xx or 2xx,3xx, got 'teapot'\n$/);
    // A class no status has, or x in a code, is a typo, not "nothing matches".
    for (const typo of ['9xx', '4x4', 'x04']) {
      const r = await bb(['show', file, '--status', `200,${typo}`]);
      assert.equal(r.code, 2, typo);
      assert.match(r.stderr, new RegExp(`^bb: --status takes codes or classes like 404, 4xx or 2xx,3xx, got '${typo}'\\n$`));
    }
  });

  it("lists mitmproxy's WebSocket export", async (t) => {
    const MITM = sharedFixture(t, 'mitmproxy-websocket.har');
    if (!MITM) return;
    const run = await bb(['show', MITM, '--json']);
    assert.equal(run.code, 0, run.stderr);
    const rows = JSON.parse(run.stdout).entries;
    assert.deepEqual(rows.map((r: { status: number; webSocketMessages: number }) => [r.status, r.webSocketMessages]), [[101, 1], [101, 1], [101, 3]]);
    const text = await bb(['show', MITM]);
    assert.equal(text.stdout.trimEnd().split('\n').length, 4);
  });
});
