import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileRules } from '../../../diff/normalize/rules.js';
import { normalizeString, normalizeValue, valueWalk } from '../../../diff/normalize/walk.js';
import { BUILTIN_RULE_NAMES } from '../../../diff/normalize/builtin-rules.js';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sharedFixture } from '../../helpers/fixtures.js';
import { OrdinalNumbering, OrdinalTable } from '../../../diff/normalize/ordinals.js';
import { DAY_MS } from '../../../diff/normalize/timestamps.js';
import { parseSseText } from '../../../diff/normalize/bodies.js';
import { parseComparedJson } from '../../../diff/normalize/json.js';
import { diffCaptures, loadDiffConfig, validateDiffConfig, renderText } from '../../../diff/index.js';
import { capture, runTime, uuid } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { isBbError } from '../../../core/index.js';
import { exitStatusFor } from '../../../cli/exit.js';

/** Normalizes a value on one side and renders its ordinals as one entry would be. */
function norm(v: unknown, cfg = {}, homes: string[] = []): unknown {
  const rules = compileRules(cfg);
  const table = new OrdinalTable();
  const out = normalizeValue(v, valueWalk(rules, homes, table));
  const n = new OrdinalNumbering(table);
  n.numberAlone(0, out);
  return n.render(0, out);
}

describe('built-in rules, one by one', () => {
  const table: Array<[string, unknown, unknown, object?, string[]?]> = [
    ['timestamp-like keys → <TS>', { created_at: '2026-01-01T10:00:00Z', updatedAt: 5, startTime: '18:34:27', timestamp: 1, expiry_date: 'Thu, 01 Jan 2026 10:00:00 GMT', ts: '1767225600', name: 'n' }, { created_at: '<TS>', updatedAt: '<TS>', startTime: '<TS>', timestamp: '<TS>', expiry_date: '<TS>', ts: '<TS>', name: 'n' }],
    // A timestamp-like key's value that is no time is compared: a field that varies and then breaks is a finding.
    ['timestamp-like keys holding no time stay', { updatedAt: '', createdAt: 'Invalid Date', timestamp: 0, isUpToDate: false, end_time: -1, expiresAt: 'never' }, { updatedAt: '', createdAt: 'Invalid Date', timestamp: 0, isUpToDate: false, end_time: -1, expiresAt: 'never' }],
    ['timestamp keys at any depth', { a: [{ b: { resolved_at: '2026' } }] }, { a: [{ b: { resolved_at: '<TS>' } }] }],
    ['null timestamps stay null (presence is compared)', { ended_at: null }, { ended_at: null }],
    ['epoch-ms keys and *Ms / *_ms → <MS>', { time: 1700000000000, since: 1, durationMs: 12, ttft_ms: 3, count: 7 }, { time: '<MS>', since: '<MS>', durationMs: '<MS>', ttft_ms: '<MS>', count: 7 }],
    ['epoch-ms keys holding no duration stay', { timeoutMs: 0, until: -1 }, { timeoutMs: 0, until: -1 }],
    ['how long it took → <MS>', { took: 12, elapsed: 3.5, hits: 4 }, { took: '<MS>', elapsed: '<MS>', hits: 4 }],
    ['epoch-ms rule leaves strings to the patterns', { time: 'later' }, { time: 'later' }],
    // Go's time.Duration#String under the same keys; zero, a bare number and words are compared.
    ['a duration written with its unit → <MS>', { took: '12ms', latency: '54.141ms', uptime: '3h12m5.5s', elapsed: '850\u00b5s', latency_s: '0s', time: '12', since: 'yesterday' }, { took: '<MS>', latency: '<MS>', uptime: '<MS>', elapsed: '<MS>', latency_s: '0s', time: '12', since: 'yesterday' }],
    // A clock time of day under a time key (toLocaleTimeString's, with ICU's narrow no-break space); under another key it is a value.
    ['a clock time under a time key → <MS> / <TS>', { time: '21:33:01', now: '9:33:01\u202fPM', startTime: '9:33 am', opens: '09:00', time_zone: 'UTC' }, { time: '<MS>', now: '<MS>', startTime: '<TS>', opens: '09:00', time_zone: 'UTC' }],
    // How long the server took, in a sentence; a delay the server asks for and a length of time in days stay.
    ['stopwatch readings in sentences → <ELAPSED>', { footer: 'Page generated in 0.0123 seconds.', log: 'query took 12ms (3 rows)', html: '<p>Rendered 12:01 in 0.092s</p>', t: 'Elapsed: 1.5 s', r: 'Response time: 850\u00b5s', retry: 'retry in 5s', ship: 'ships in 2 days', took: 'took over' }, { footer: 'Page generated in <ELAPSED>.', log: 'query took <ELAPSED> (3 rows)', html: '<p>Rendered 12:01 in <ELAPSED></p>', t: 'Elapsed: <ELAPSED>', r: 'Response time: <ELAPSED>', retry: 'retry in 5s', ship: 'ships in 2 days', took: 'took over' }],
    // How long ago, as a page or an API says it to people; `long ago`, a city and a word alone stay.
    ['relative times → <AGO>', { seen: '2 minutes ago', short: 'edited 5m ago', moment: 'a few seconds ago', hour: 'an hour ago', upper: '3 DAYS AGO', html: '<time datetime="x">3 days ago</time>', hrs: 'updated 12 hrs  ago', word: 'long ago', city: 'Chicago', alone: 'ago', plan: '2 days', then: 'ago 5 minutes' }, { seen: '<AGO>', short: 'edited <AGO>', moment: '<AGO>', hour: '<AGO>', upper: '<AGO>', html: '<time datetime="x"><AGO></time>', hrs: 'updated <AGO>', word: 'long ago', city: 'Chicago', alone: 'ago', plan: '2 days', then: 'ago 5 minutes' }],
    // A clock time under `at`, as under other time keys; a place under it stays.
    ['a clock time or a date under `at` → <TS>', { at: '21:33:01', where: { at: 'home' } }, { at: '<TS>', where: { at: 'home' } }],
    ['request-id keys → <ID>', { request_id: 'r1', requestId: 'r2', 'x-request-id': 'r3', trace_id: 't', span_id: 77 }, { request_id: '<ID>', requestId: '<ID>', 'x-request-id': '<ID>', trace_id: '<ID>', span_id: '<ID>' }],
    ['request-id keys holding no id stay', { request_id: '', requestId: 'undefined', traceId: false, span_id: 0, correlation_id: 'not an id' }, { request_id: '', requestId: 'undefined', traceId: false, span_id: 0, correlation_id: 'not an id' }],
    ['ISO-8601 inside strings → <TS>', { msg: 'at 2026-01-02T03:04:05.678Z and 2026-01-02 03:04:05+02:00' }, { msg: 'at <TS> and <TS>' }],
    ['loopback ports', { url: 'http://127.0.0.1:41234/x', b: 'localhost:9', c: '[::1]:80' }, { url: 'http://127.0.0.1:<PORT>/x', b: 'localhost:<PORT>', c: '[::1]:<PORT>' }],
    ['::ffff:127.0.0.1 → 127.0.0.1', { peer: '::ffff:127.0.0.1' }, { peer: '127.0.0.1' }],
    ['server home → <HOME>', { cwd: '/tmp/home-abc/work', other: '/tmp/home-abcd' }, { cwd: '<HOME>/work', other: '<HOME>d' }, {}, ['/tmp/home-abc']],
    ['session ids numbered by first appearance', { a: 'session_11111111-1111-4111-8111-111111111111', b: 'session_22222222-2222-4222-8222-222222222222', c: 'session_11111111-1111-4111-8111-111111111111' }, { a: '<SID:1>', b: '<SID:2>', c: '<SID:1>' }],
    ['bare uuids → <UUID:n>', ['0f8fad5b-d9cb-469f-a165-70867728950e', '7c9e6679-7425-40de-944b-e07fc1f90ae7', '0f8fad5b-d9cb-469f-a165-70867728950e'], ['<UUID:1>', '<UUID:2>', '<UUID:1>']],
    ['ULIDs → <ULID:n>', { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', x: 'msg 01ARZ3NDEKTSV4RRFFQ69G5FAW' }, { id: '<ULID:1>', x: 'msg <ULID:2>' }],
    ['prefixed ids keep their prefix and number the id', { m: 'msg_01ARZ3NDEKTSV4RRFFQ69G5FAV', c: 'conn_0f8fad5b-d9cb-469f-a165-70867728950e', w: 'x01ARZ3NDEKTSV4RRFFQ69G5FAV' }, { m: 'msg_<ULID:1>', c: 'conn_<UUID:1>', w: 'x01ARZ3NDEKTSV4RRFFQ69G5FAV' }],
    ['objects under a kept key are still normalized inside', { event: { type: 'tick', at: '2026-01-01T00:00:00Z', created_at: 1767225600 }, type: 'verbatim-2026-01-01T00:00:00Z' }, { event: { type: 'tick', at: '<TS>', created_at: '<TS>' }, type: 'verbatim-2026-01-01T00:00:00Z' }],
    ['patterns apply inside object keys', { cursors: { 'session_11111111-1111-4111-8111-111111111111': 4 } }, { cursors: { '<SID:1>': 4 } }],
    ['the keep list is compared verbatim', { seq: 1700000000000, cursor: '2026-01-01T00:00:00Z', status: 'x' }, { seq: 1700000000000, cursor: '2026-01-01T00:00:00Z', status: 'x' }],
    ['config keep adds keys', { stamp_at: 'x' }, { stamp_at: 'x' }, { keep: ['stamp_at'] }],
    ['config switches a built-in off by name', { created_at: 'x', id: '0f8fad5b-d9cb-469f-a165-70867728950e' }, { created_at: 'x', id: '<UUID:1>' }, { disable: ['timestamp-keys'] }],
    ['config key rules', { systemPromptHash: 'abc', n: { SystemPromptHash: 'd' } }, { systemPromptHash: '<SHA>', n: { SystemPromptHash: '<SHA>' } }, { keys: [{ key: 'systemPromptHash', replace: '<SHA>' }] }],
    ['generated ids → their shape, numbered', { a: 'a1b2c3d4e5f6', n: 'V1StGXR8_Z5jdHi6B-myT', b: '3kTMd9Zq0XwV1bPs7yLr2A', again: 'a1b2c3d4e5f6', word: 'getUserNameFromSession' }, { a: '<HEX12:1>', n: '<NANOID:1>', b: '<B64_22:1>', again: '<HEX12:1>', word: 'getUserNameFromSession' }],
    ['numeric ids under id keys, not counts or prices', { id: 48213, orderId: '10234', count: 48213, price: 1299, small: { id: 7 } }, { id: '<INT:1>', orderId: '<DIGITS:1>', count: 48213, price: 1299, small: { id: 7 } }],
    ['config patterns, fixed and ordinal', { a: 'conn_abc1', m: 'msg_x1 msg_x2 msg_x1' }, { a: '<CONN>', m: '<MSG:1> <MSG:2> <MSG:1>' }, { patterns: [{ regex: 'conn_[a-z0-9]+', replace: '<CONN>' }, { regex: 'msg_[a-z0-9]+', ordinal: 'MSG' }] }],
  ];
  for (const [name, input, want, cfg, homes] of table) {
    it(name, () => assert.deepEqual(norm(input, cfg ?? {}, homes ?? []), want));
  }

  it('a timestamp-like key takes a time inside the side\'s window, in any common form; a fixed date years away is a value', () => {
    const window = { from: Date.parse('2026-01-01T00:00:00Z') - DAY_MS, to: Date.parse('2026-01-01T01:00:00Z') + DAY_MS };
    const out = normalizeValue(
      {
        createdAt: '2026-01-01T00:30:00.123Z', updated_at: 'Thu Jan 01 2026 00:30:00 GMT+0000 (Coordinated Universal Time)', date: '2026-01-01',
        startTime: 1767227400, ts: 1767227400123, lastModifiedAt: '1767227400',
        birthDate: '1990-05-01', expiresAt: '2099-01-01T00:00:00Z', createdAtMs: 1_000_000_000_000,
      },
      valueWalk(compileRules(), [], new OrdinalTable(), window),
    );
    assert.deepEqual(out, {
      createdAt: '<TS>', updated_at: '<TS>', date: '<TS>', startTime: '<TS>', ts: '<TS>', lastModifiedAt: '<TS>',
      birthDate: '1990-05-01', expiresAt: '2099-01-01T00:00:00Z', createdAtMs: 1_000_000_000_000,
    });
  });

  it(".NET's DateTime.Ticks under a ticks key, as a number, a number past 2^53 kept as written, or a string, inside the window; ticks years away are a value", () => {
    const window = { from: Date.parse('2026-01-01T00:00:00Z') - DAY_MS, to: Date.parse('2026-01-01T01:00:00Z') + DAY_MS };
    // 2026-01-01T00:30:00Z: 1767227400000 ms after 1970, 621355968000000000 ticks at 1970.
    const now = 1767227400000n * 10_000n + 621_355_968_000_000_000n;
    const json = `{"ticks":"${now}","createdTicks":${now + 12_345n},"expiry_ticks":"${now + 3_153_600_000_000_000n}"}`;
    const out = normalizeValue(parseComparedJson(json), valueWalk(compileRules(), [], new OrdinalTable(), window));
    assert.deepEqual(out, { ticks: '<TS>', createdTicks: '<TS>', expiry_ticks: `${now + 3_153_600_000_000_000n}` });
  });

  it('parses SSE text into events, data as JSON when it parses; the last id carries over (HTML spec)', () => {
    assert.deepEqual(parseSseText('event: a\nid: 1\ndata: {"x":1}\n\n: comment\ndata: two\ndata: lines\n\n'), [
      { event: 'a', id: '1', data: { x: 1 } },
      { event: 'message', id: '1', data: 'two\nlines' },
    ]);
  });

  it('reads SSE text as bb\'s capture does: BOM skipped, NUL id ignored, an unterminated last event dropped', () => {
    assert.deepEqual(parseSseText('\ufeffid: a\0b\ndata: 1\n\nid: 2\ndata: {"n":2}\n\ndata: cut'), [
      { event: 'message', id: '', data: 1 },
      { event: 'message', id: '2', data: { n: 2 } },
    ]);
  });
});

describe('strings too short for any value rule', () => {
  // Each built-in value rule's shortest match: the walk skips shorter strings without running the rules or the memo.
  const shortestMatch: Record<string, string> = {
    'ipv4-mapped-loopback': '::ffff:127.0.0.1',
    'loopback-port': '[::1]:0',
    'multipart-boundary': 'boundary=x',
    'iso-time': '1994-11-06T08:49',
    'session-id': `session_${'a'.repeat(32)}`,
    ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    uuid: '123e4567-e89b-12d3-a456-426614174000',
    'server-home': '/x',
    // Dated inside the window below (November 1994).
    'http-dates': 'Sun, 6-Nov-94 08:49:37 GMT',
    // Inside the window read month first (7 January 1995).
    'runtime-dates': '1/7/1995 8:49',
    'epoch-timestamps': '0784111777',
    'stopwatch-text': 'took 1s',
    'relative-times': '1s ago',
    redacted: '<redacted:0123abcd>',
    'generated-ids': 'a1b2c3d4e5f6',
  };
  const window = { from: Date.parse('1994-11-05T00:00:00Z'), to: Date.parse('1995-01-08T00:00:00Z') };

  it('knows the shortest string each built-in rule changes, and the rule changes no shorter substring of it', () => {
    const rules = compileRules();
    const table = new OrdinalTable();
    const homes = ['/x'];
    for (const r of rules.valueRules) {
      const example = shortestMatch[r.name];
      assert.ok(example !== undefined && r.shortest, `${r.name}: an example and a shortest length`);
      assert.equal(r.shortest(homes), example.length, r.name);
      assert.notEqual(r.apply(example, homes, table, window), example, `${r.name} changes ${example}`);
      for (let len = 1; len < example.length; len++) {
        for (let at = 0; at + len <= example.length; at++) {
          const sub = example.slice(at, at + len);
          assert.equal(r.apply(sub, homes, table, window), sub, `${r.name} leaves ${JSON.stringify(sub)}`);
        }
      }
    }
  });

  it('has the walk skip only strings no rule would change: every string of the shared HAR fixtures, as the rules give it', async (t) => {
    const dir = sharedFixture(t);
    if (!dir) return;
    const strings = new Set<string>(['a', '[::1]:1', 'x:1', 'ab', '/x', '/x/y', '', ...Object.values(shortestMatch)]);
    const collect = (v: unknown): void => {
      if (typeof v === 'string') {
        strings.add(v);
        try {
          if (/^\s*[[{]/.test(v)) collect(JSON.parse(v));
        } catch {
          // not JSON: the string itself is enough
        }
      } else if (Array.isArray(v)) v.forEach(collect);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) (strings.add(k), collect(x));
    };
    for (const f of (await readdir(dir)).filter((f) => f.endsWith('.har'))) {
      try {
        collect(JSON.parse((await readFile(join(dir, f), 'utf8')).replace(/^\uFEFF/, '')));
      } catch {
        // broken.har is broken on purpose
      }
    }
    assert.ok(strings.size > 500, `${strings.size} strings`);
    for (const [cfg, homes, shortest] of [
      [{}, [], 6],
      [{}, ['/x', '/home/someone'], 2],
      [{ patterns: [{ regex: 'a', replace: 'b' }] }, [], 0],
    ] as Array<[object, string[], number]>) {
      const rules = compileRules(cfg);
      const table = new OrdinalTable();
      const walk = valueWalk(rules, homes, table);
      assert.equal(walk.shortest, shortest);
      for (const s of strings) {
        let expected = s;
        for (const r of rules.valueRules) expected = r.apply(expected, homes, table, undefined);
        assert.equal(normalizeString(s, walk), expected, JSON.stringify(s));
      }
    }
  });
});

describe('config validation', () => {
  it('refuses an unknown rule name, naming it and the known ones', () => {
    assert.throws(() => validateDiffConfig({ normalize: { disable: ['uuids'] } }, 'bb.config.json'), (err: Error) => {
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      assert.match(err.message, /normalize\.disable\[0\]: unknown rule "uuids"/);
      assert.ok(err.message.includes(BUILTIN_RULE_NAMES.join(', ')));
      return true;
    });
  });
  it('refuses a bad regex, naming it', () => {
    assert.throws(() => validateDiffConfig({ normalize: { patterns: [{ regex: 'a(b' }] } }), (err: Error) => {
      assert.ok(isBbError(err), String(err));
      assert.equal(exitStatusFor(err), 2);
      assert.match(err.message, /normalize\.patterns\[0\]\.regex: bad regular expression "a\(b"/);
      return true;
    });
  });
  it('refuses an unknown pairing key', () => {
    assert.throws(() => validateDiffConfig({ pairing: { keys: [{ route: 'POST /x', by: 'magic' }] } }), /pairing\.keys\[0\]\.by: unknown key "magic"/);
  });
});

describe('whole captures', () => {
  const t = tempDir();

  function sessionRun(a: string, b: string) {
    return capture([
      { method: 'POST', url: 'http://127.0.0.1:4001/v1/sessions', body: { id: a, created_at: runTime() } },
      { method: 'POST', url: 'http://127.0.0.1:4001/v1/sessions', body: { id: b, created_at: runTime() } },
      { url: `http://127.0.0.1:4001/v1/sessions/${a}`, body: { id: a, forked_from: null } },
      { url: `http://127.0.0.1:4001/v1/sessions/${b}`, body: { id: b, forked_from: a } },
      { url: 'http://127.0.0.1:4001/v1/sessions', body: { items: [{ id: a }, { id: b }], cursors: { [a]: 1, [b]: 2 } } },
    ]);
  }

  it('maps session A/B to <SID:1>/<SID:2> in both files whatever the ids', async () => {
    const oldPath = await t.write('old.har', sessionRun(`session_${uuid()}`, `session_${uuid()}`));
    const newPath = await t.write('new.har', sessionRun(`session_${uuid()}`, `session_${uuid()}`));
    const r = await diffCaptures(oldPath, newPath);
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    assert.equal(r.exitCode, 0);
    assert.equal(r.pairs.length, 5);
    assert.ok(r.pairs.some((p) => p.id === '/GET /v1/sessions/<SID>#1'));
  });

  it('sees swapped identities: A and B exchanged in the fork is a difference', async () => {
    const [a, b] = [`session_${uuid()}`, `session_${uuid()}`];
    const oldPath = await t.write('old2.har', sessionRun(a, b));
    const swapped = sessionRun(a, b);
    (swapped.log.entries[3]!.response.content as { text: string }).text = JSON.stringify({ id: b, forked_from: b });
    const newPath = await t.write('new2.har', swapped);
    const r = await diffCaptures(oldPath, newPath);
    assert.equal(r.verdict, 'diff');
    assert.deepEqual(r.differences.map((d) => [d.path, d.old, d.new]), [['response.body.forked_from', '<SID:1>', '<SID:2>']]);
  });

  it('a time or request id that varies matches; the same field broken in the new build is a finding', async () => {
    const run = (body: (i: number) => Record<string, unknown>, requestId: (i: number) => string) =>
      capture([0, 1].map((i) => ({ url: `http://127.0.0.1:1/item/${i}`, body: body(i), responseHeaders: [['X-Request-Id', requestId(i)]] as Array<[string, string]> })));
    const good = () => run(() => ({ updatedAt: runTime(), timestamp: Date.parse(runTime()), timeoutMs: 30_000, requestId: uuid() }), () => uuid());
    const same = await diffCaptures(await t.write('k1.har', good()), await t.write('k2.har', good()));
    assert.equal(same.verdict, 'match', renderText(same, { color: false }));
    // Item 1 of the new build: an empty time, a zero epoch, a zero timeout, "undefined" for an id, an empty id header.
    const broken = run(
      (i) => (i === 0 ? { updatedAt: runTime(), timestamp: Date.parse(runTime()), timeoutMs: 30_000, requestId: uuid() } : { updatedAt: '', timestamp: 0, timeoutMs: 0, requestId: 'undefined' }),
      (i) => (i === 0 ? uuid() : ''),
    );
    const r = await diffCaptures(await t.write('k3.har', good()), await t.write('k4.har', broken));
    assert.deepEqual(
      r.differences.map((d) => [d.entry.replace(/#\d+$/, ''), d.path, d.old, d.new]).sort(),
      [
        ['/GET /item/1', 'response.body.requestId', '<ID>', 'undefined'],
        ['/GET /item/1', 'response.body.timeoutMs', '<MS>', 0],
        ['/GET /item/1', 'response.body.timestamp', '<TS>', 0],
        ['/GET /item/1', 'response.body.updatedAt', '<TS>', ''],
        ['/GET /item/1', 'response.headers.x-request-id', '<ID>', ''],
      ],
      renderText(r, { color: false }),
    );
  });

  it('the server\'s own timing headers are masked: two runs of one build match', async () => {
    const run = (ms: number) => capture([{ url: 'http://127.0.0.1:1/t', body: 'ok', responseHeaders: [['Server-Timing', `db;dur=${ms}, app;dur=${ms * 2}`], ['X-Response-Time', `${ms}ms`], ['X-Runtime', String(ms / 1000)], ['X-Envoy-Upstream-Service-Time', String(ms)]] }]);
    const r = await diffCaptures(await t.write('st1.har', run(25.9)), await t.write('st2.har', run(6.2)));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('replaces the capture’s serverHome and masks volatile headers', async () => {
    const run = (home: string, etag: string) => capture([{ url: 'http://127.0.0.1:1/cfg', body: { dir: `${home}/data` }, responseHeaders: [['ETag', etag], ['Connection', 'keep-alive']] }], { serverHome: home });
    const r = await diffCaptures(await t.write('h1.har', run('/tmp/h-1', '"a"')), await t.write('h2.har', run('/tmp/h-22', '"b"')));
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('a status change is always reported (never normalized)', async () => {
    const r = await diffCaptures(
      await t.write('s1.har', capture([{ url: 'http://127.0.0.1:1/x', status: 200, body: 'ok' }])),
      await t.write('s2.har', capture([{ url: 'http://127.0.0.1:1/x', status: 201, body: 'ok' }])),
    );
    assert.deepEqual(r.differences.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', 'response.status', 200, 201]]);
  });

  it('loads a config file and refuses a broken one with exit 2', async () => {
    const good = await t.write('good.json', { normalize: { disable: ['uuid'] } });
    assert.deepEqual((await loadDiffConfig(good)).normalize.disable, ['uuid']);
    const bad = await t.write('bad.json', '{"normalize": ');
    await assert.rejects(loadDiffConfig(bad), (err: Error) => isBbError(err) && exitStatusFor(err) === 2 && /not valid JSON/.test(err.message));
  });
});
