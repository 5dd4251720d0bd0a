// A config or report that is not JSON is refused in one line, whichever
// command reads it (V8's JSON.parse message quotes the text, newlines included).
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runBb } from '../../helpers/cli.js';
import { har, capture, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

describe('configs that are not JSON', () => {
  it('bb diff --config, bb known add --config / --from and bb compare --config answer one line, exit 2', async (t) => {
    const tmp = tempDir(t);
    const dir = tmp.dir;
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{\n  "known": [\n}\n');
    const report = join(dir, 'report.json');
    await writeFile(report, JSON.stringify({ differences: [{ id: 'abc', kind: 'changed', entry: '/GET /x#1', path: 'response.status' }] }));
    const empty = await tmp.write('x.har', har([]));
    const runs = [
      ['diff', empty, empty, '--config', bad],
      ['known', 'add', 'abc', '--from', report, '--reason', 'r', '--config', bad],
      ['known', 'add', 'abc', '--from', bad, '--reason', 'r', '--config', join(dir, 'new.json')],
      ['compare', '--config', bad, '--out', join(dir, 'run')],
    ];
    for (const args of runs) {
      const r = await runBb(args, { BB_HOME: join(dir, 'home') });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^bb: [^\n]*bad\.json[^\n]* (is not valid JSON|is not a bb diff --json report) \([^\n]+\)[^\n]*\n$/, `${args.join(' ')}: ${r.stderr}`);
    }
  });

  it('a folder or a missing file given as a config or a report says so in words (no errno code), one line, exit 2', async (t) => {
    const tmp = tempDir(t);
    const dir = tmp.dir;
    const folder = tmp.path('a-folder');
    await mkdir(folder);
    const one = await tmp.write('one.har', capture([{ url: 'http://127.0.0.1:5001/v1/x', body: { n: 1 } }]));
    const notReport = await tmp.write('not-report.json', { a: 1 });
    const runs: Array<[string[], RegExp]> = [
      [['diff', one, one, '--config', folder], /^bb: config .*a-folder cannot be read \(it is a folder, not a file\): check the --config path\.\n$/],
      [['known', 'add', 'abc', '--from', folder, '--reason', 'r'], /^bb: cannot read report .*a-folder \(it is a folder, not a file\): check the path\.\n$/],
      [['known', 'add', 'abc', '--from', notReport, '--reason', 'r'], /^bb: .*not-report\.json is not a bb diff --json report \(no "differences" list\): pass the file bb diff --json wrote\.\n$/],
      [['compare', '--config', folder, '--out', join(dir, 'run')], /^bb: config .*a-folder cannot be read \(it is a folder, not a file\): pass --config/],
      [['replay', one, '--target', 'http://127.0.0.1:9', '--config', folder], /^bb: config file .*a-folder cannot be read \(it is a folder, not a file\): give the path of a JSON file, or leave --config out\.\n$/],
      [['shadow', '--merge', folder], /^bb: .*a-folder cannot be read \(it is a folder, not a file\): give the --json files of bb shadow runs\n$/],
      [['shadow', '--merge', join(dir, 'missing.json')], /^bb: .*missing\.json cannot be read \(it does not exist\): give the --json files of bb shadow runs\n$/],
    ];
    for (const [args, re] of runs) {
      const r = await runBb(args, { BB_HOME: join(dir, 'home') });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(' '));
    }
  });
});

// A ratification fixes what it ratified (issue 33 item 6): `bb known add`
// records the values of the changed rows it ratifies, so the run after it
// passes with those values and fails again, saying what was ratified, when a
// later capture regresses a status, a value or a count at the same place.
// Several ids, --all and --route ratify many findings with one reason.
// One small API: a create, a read, a count, and a version header on every response.
const api = (o: { created: number; name: string; count: number; version: string }): ExchangeSpec[] => [
  { method: 'POST', url: 'http://127.0.0.1:1/items', requestBody: { name: 'x' }, status: o.created, body: { ok: true }, responseHeaders: [['X-Version', o.version]] },
  { url: 'http://127.0.0.1:1/items/1', body: { name: o.name, tags: ['t'] }, responseHeaders: [['X-Version', o.version]] },
  { url: 'http://127.0.0.1:1/stats', body: { count: o.count }, responseHeaders: [['X-Version', o.version]] },
];

interface ReportDoc {
  findings: Array<{ id: string; class: string; kind: string; pattern: string; routes: string[]; ratified?: { known: number; old?: unknown; new?: unknown } }>;
}

describe('bb known add records what it ratified', () => {
  const t = tempDir();
  let oldHar: string;
  let newHar: string;
  let regressed: string;
  let report: string;
  let doc: ReportDoc;
  const idOf = (pattern: string) => doc.findings.find((f) => f.pattern === pattern)!.id;
  before(async () => {
    oldHar = await t.write('old.har', capture(api({ created: 201, name: 'a', count: 3, version: 'v1' })));
    newHar = await t.write('new.har', capture(api({ created: 200, name: 'A', count: 4, version: 'v2' })));
    // The same upgrade, then three regressions at the ratified places.
    regressed = await t.write('regressed.har', capture(api({ created: 500, name: 'Z', count: 99, version: 'v2' })));
    report = join(t.dir, 'report.json');
    const r = await runBb(['diff', oldHar, newHar, '--json', report]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    doc = JSON.parse(await readFile(report, 'utf8'));
    assert.deepEqual(doc.findings.map((f) => `${f.kind} ${f.pattern}`).sort(), ['changed response.body.count', 'changed response.body.name', 'changed response.headers.x-version', 'changed response.status']);
  });

  it('--all ratifies every real finding with its values: MATCH; a regressed status, value and count are real again, exit 1', async () => {
    const config = join(t.dir, 'all.json');
    const add = await runBb(['known', 'add', '--all', '--from', report, '--reason', 'upgrade v2', '--config', config]);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    assert.equal(add.stdout.split('\n').filter((l) => l.startsWith('added to ')).length, 4, add.stdout);
    assert.match(add.stdout, /known where "\*\/POST \/items#\*" path "response\.status" kind changed as 201 → 200: upgrade v2\n/);
    const known = JSON.parse(await readFile(config, 'utf8')).known;
    assert.deepEqual(known.find((k: { path: string }) => k.path === 'response.status'), { where: '*/POST /items#*', path: 'response.status', kind: 'changed', old: 201, new: 200, reason: 'upgrade v2' });
    assert.deepEqual(known.find((k: { path: string }) => k.path === 'response.headers.x-version'), { where: ['*/POST /items#*', '*/GET /items/1#*', '*/GET /stats#*'], path: 'response.headers.x-version', kind: 'changed', old: 'v1', new: 'v2', reason: 'upgrade v2' });

    const again = await runBb(['diff', oldHar, newHar, '--config', config]);
    assert.equal(again.code, 0, again.stdout);
    assert.match(again.stdout, /^MATCH with 4 known\b/);
    assert.doesNotMatch(again.stdout, /[Ss]tale/);

    const json = join(t.dir, 'regressed.json');
    const junit = join(t.dir, 'regressed.xml');
    const html = join(t.dir, 'regressed.html');
    const bad = await runBb(['diff', oldHar, regressed, '--config', config, '--json', json, '--junit', junit, '--html', html]);
    assert.equal(bad.code, 1, bad.stdout);
    assert.match(bad.stdout, /^DIFF: 3 real findings \(3 differences\)/);
    assert.match(bad.stdout, /response\.status changed 201 → 500 in 1 of 1 POST \/items\n {6}was ratified as 201 → 200, now 201 → 500 \(known\[\d\]: upgrade v2\)\n/);
    assert.match(bad.stdout, /was ratified as "a" → "A", now "a" → "Z"/);
    assert.match(bad.stdout, /was ratified as 3 → 4, now 3 → 99/);
    // The ratified header is unchanged: still known, and no entry is stale (the broken ones met their place).
    assert.match(bad.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.headers\.x-version changed "v1" → "v2"/);
    assert.doesNotMatch(bad.stdout, /[Ss]tale/);
    const out = JSON.parse(await readFile(json, 'utf8')) as ReportDoc & { staleKnown: unknown[] };
    assert.deepEqual(out.staleKnown, []);
    const status = out.findings.find((f) => f.pattern === 'response.status')!;
    assert.equal(status.class, 'real');
    assert.deepEqual({ ...status.ratified, known: 0 }, { known: 0, old: 201, new: 200, reason: 'upgrade v2' });
    assert.match(await readFile(junit, 'utf8'), /was ratified as 201 → 200, now 201 → 500/);
    // The HTML wraps tokens in tags: its text says the same.
    const htmlText = (await readFile(html, 'utf8')).replace(/<[^>]+>/g, '');
    assert.match(htmlText, /response\.body\.count changed 3 → 99 in 1 of 1 GET \/stats was ratified as 3 → 4, now 3 → 99/);
  });

  it('a finding on every route that has the field is ratified on those routes: a new route breaking the same field is real', async () => {
    const config = join(t.dir, 'routes.json');
    const add = await runBb(['known', 'add', idOf('response.headers.x-version'), '--from', report, '--reason', 'v2 header', '--config', config]);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    const withReport = (version: string): ExchangeSpec[] => [...api({ created: 201, name: 'a', count: 3, version }), { url: 'http://127.0.0.1:1/report', body: { ok: true }, responseHeaders: [['X-Version', version]] }];
    const r = await runBb(['diff', await t.write('r-old.har', capture(withReport('v1'))), await t.write('r-new.har', capture(withReport('v2'))), '--config', config, '--rows']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /^DIFF: 1 real finding \(1 difference\)[^]*response\.headers\.x-version changed "v1" → "v2" in 1 of 1 GET \/report/);
    assert.match(r.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.headers\.x-version changed "v1" → "v2" in 3 of 3/);
  });

  it('a known entry written by hand, without values, matches any value', async () => {
    const config = await t.write('hand.json', { known: [{ where: '*/POST /items#*', path: 'response.status', reason: 'the create answers whatever it likes' }] });
    const r = await runBb(['diff', oldHar, regressed, '--config', config]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /^DIFF: 3 real findings/);
    assert.match(r.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.status changed 201 → 500/);
    assert.doesNotMatch(r.stdout, /was ratified/);
  });

  it('several ids in one call write one entry each, with one reason', async () => {
    const config = join(t.dir, 'ids.json');
    const add = await runBb(['known', 'add', idOf('response.status'), idOf('response.body.count'), '--from', report, '--reason', 'two at once', '--config', config]);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    const known = JSON.parse(await readFile(config, 'utf8')).known as Array<{ path: string; reason: string }>;
    assert.deepEqual(known.map((k) => [k.path, k.reason]), [['response.status', 'two at once'], ['response.body.count', 'two at once']]);
    const r = await runBb(['diff', oldHar, newHar, '--config', config]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^DIFF: 2 real findings/);
    const twice = await runBb(['known', 'add', idOf('response.status'), '--from', report, '--reason', 'again', '--config', config]);
    assert.match(twice.stdout, /already has a known entry for finding/);
  });

  it('--route ratifies the part of every real finding on the routes it selects', async () => {
    const config = join(t.dir, 'route.json');
    const add = await runBb(['known', 'add', '--route', 'GET /stats', '--from', report, '--reason', 'stats v2', '--config', config]);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    const known = JSON.parse(await readFile(config, 'utf8')).known as Array<{ where: unknown; path: string }>;
    // The count exists on /stats only: its finding covers every route where it exists, and is still scoped to it.
    assert.deepEqual(known.map((k) => [k.where, k.path]).sort(), [['*/GET /stats#*', 'response.body.count'], ['*/GET /stats#*', 'response.headers.x-version']]);
    const r = await runBb(['diff', oldHar, newHar, '--config', config]);
    assert.equal(r.code, 1);
    // The header on the other two routes is still real; on /stats it is known.
    assert.match(r.stdout, /^DIFF: 3 real findings \(4 differences\)/);
    assert.match(r.stdout, /response\.headers\.x-version changed "v1" → "v2" in 2 of 2 entries, 2 routes/);
    const none = await runBb(['known', 'add', '--route', 'GET /nowhere', '--from', report, '--reason', 'r', '--config', config]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no real finding on a route like "GET \/nowhere"/);
  });

  it('refuses ids with --all, and nothing to ratify, in one line (exit 2)', async () => {
    const both = await runBb(['known', 'add', idOf('response.status'), '--all', '--from', report, '--reason', 'r', '--config', join(t.dir, 'x.json')]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^bb: bb known add takes finding ids or --all, not both[^\n]*\n$/);
    const nothing = await runBb(['known', 'add', '--from', report, '--reason', 'r', '--config', join(t.dir, 'x.json')]);
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /^bb: bb known add needs finding ids, --all or --route GLOB[^\n]*\n$/);
  });
});

// An added field is ratified with what the new build sent there: a later
// build that sends something else in it is real again. A removed field's
// ratification is of its absence (its old value is the old build's).
describe('bb known add on an added and a removed field', () => {
  const t = tempDir();
  const me = (body: Record<string, unknown>): ExchangeSpec[] => [{ url: 'http://127.0.0.1:1/me', body }];

  it('records the added value: the same value is known, another one real and says what was ratified; the removal stays known', async () => {
    const oldHar = await t.write('old.har', capture(me({ name: 'ann', legacy: 1 })));
    const newHar = await t.write('new.har', capture(me({ name: 'ann', role: 'user' })));
    const report = join(t.dir, 'report.json');
    assert.equal((await runBb(['diff', oldHar, newHar, '--json', report])).code, 1);
    const config = join(t.dir, 'config.json');
    const add = await runBb(['known', 'add', '--all', '--from', report, '--reason', 'role added, legacy gone', '--config', config]);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    assert.match(add.stdout, /path "response\.body\.role" kind added as "user": role added, legacy gone\n/);
    assert.match(add.stdout, /path "response\.body\.legacy" kind removed: role added, legacy gone\n/);
    const known = JSON.parse(await readFile(config, 'utf8')).known as Array<Record<string, unknown>>;
    assert.deepEqual(known.map((k) => [k.path, k.kind, 'old' in k, k.new]).sort(), [['response.body.legacy', 'removed', false, undefined], ['response.body.role', 'added', false, 'user']]);

    const same = await runBb(['diff', oldHar, await t.write('same.har', capture(me({ name: 'ann', role: 'user' }))), '--config', config]);
    assert.equal(same.code, 0, same.stdout);
    assert.match(same.stdout, /^MATCH with 2 known\b/);

    const admin = await runBb(['diff', oldHar, await t.write('admin.har', capture(me({ name: 'ann', role: 'admin' }))), '--config', config]);
    assert.equal(admin.code, 1, admin.stdout);
    assert.match(admin.stdout, /^DIFF: 1 real finding \(1 difference\)/);
    assert.match(admin.stdout, /response\.body\.role added "admin" in 1 of 1 GET \/me\n {6}was ratified as added "user", now added "admin" \(known\[\d\]: role added, legacy gone\)\n/);
    assert.match(admin.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.body\.legacy removed/);
  });
});
