import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../../helpers/cli.js';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { capture, har, runTime, uuid } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { sharedFixture } from '../../helpers/fixtures.js';


// The real CLI, run to completion (NO_COLOR set: output is compared as text).
const bb = runBb;

describe('bb diff on the command line', () => {
  const t = tempDir();
  let same1: string;
  let same2: string;
  let changed: string;
  before(async () => {
    const run = (n: number) => capture([
      { method: 'POST', url: 'http://127.0.0.1:5001/v1/sessions', body: { id: `session_${uuid()}`, created_at: runTime() } },
      { url: 'http://127.0.0.1:5001/v1/items', body: { items: [{ name: 'a', n }, { name: 'b', n: 1 }] } },
    ]);
    same1 = await t.write('same1.har', run(1));
    same2 = await t.write('same2.har', run(1));
    changed = await t.write('changed.har', run(2));
  });

  it('exits 0 and prints MATCH first when only volatile values differ', async () => {
    const r = await bb(['diff', same1, same2]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^MATCH /);
  });

  it('colours the report on a pipe with FORCE_COLOR, and never with NO_COLOR', async () => {
    const forced = await bb(['diff', same1, changed], { NO_COLOR: '', FORCE_COLOR: '1' });
    assert.equal(forced.code, 1, forced.stderr);
    assert.match(forced.stdout, /\x1b\[/);
    const plain = await bb(['diff', same1, changed], { NO_COLOR: '', FORCE_COLOR: '0' });
    assert.doesNotMatch(plain.stdout, /\x1b\[/, 'FORCE_COLOR=0 on a pipe: no colour');
    const both = await bb(['diff', same1, changed], { NO_COLOR: '1', FORCE_COLOR: '1' });
    assert.doesNotMatch(both.stdout, /\x1b\[/, 'NO_COLOR wins');
  });

  it('exits 1 with the field, its id and old → new', async () => {
    const r = await bb(['diff', same1, changed, '--rows'], { NO_COLOR: '1' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^DIFF: 1 real finding \(1 difference\)/);
    assert.match(r.stdout, /\[F[0-9a-f]{9}\] response\.body\.items\[\]\.n changed 1 → 2 in 1 of 1 GET \/v1\/items/);
    assert.match(r.stdout, /\[[0-9a-f]{10}\] GET \/v1\/items \(\/GET \/v1\/items#1, old #2 → new #2\) response\.body\.items\[0\]\.n: 1 → 2/);
    assert.ok(!r.stdout.includes('\x1b['), 'no colour when not a TTY');
  });

  it('--rows names each side\'s exchange by its #<seq>, as bb show lists it, not by its index', async () => {
    const items = (n: number) => ({ url: 'http://127.0.0.1:5001/v1/items', body: { n } });
    const oldHar = await t.write('rows-old.har', capture([{ url: 'http://127.0.0.1:5001/v1/a', body: 'a' }, items(1)]));
    // One exchange more before /v1/items: its seq is 3 in the new capture, 2 in the old.
    const newHar = await t.write('rows-new.har', capture([{ url: 'http://127.0.0.1:5001/v1/a', body: 'a' }, { url: 'http://127.0.0.1:5001/v1/extra', body: 'x' }, items(2)]));
    const r = await bb(['diff', oldHar, newHar, '--rows'], { NO_COLOR: '1' });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^ {6}\[[0-9a-f]{10}\] GET \/v1\/items \(\/GET \/v1\/items#1, old #2 → new #3\) response\.body\.n: 1 → 2$/m);
    assert.match(r.stdout, /^ {6}\[[0-9a-f]{10}\] GET \/v1\/extra \(\/GET \/v1\/extra#1, new #2\): /m);
    const shown = await bb(['show', newHar], { NO_COLOR: '1' });
    assert.match(shown.stdout, /^#3 .*\/v1\/items$/m, 'bb show lists the same exchange as #3');
  });

  it('--json - prints the structured result on stdout', async () => {
    const r = await bb(['diff', same1, changed, '--json', '-']);
    assert.equal(r.code, 1, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.format, 1);
    assert.equal(doc.verdict, 'diff');
    assert.equal(doc.exitCode, 1);
    assert.deepEqual(doc.counts, { real: 1, known: 0, noise: 0, pairs: 2, findings: { real: 1, known: 0, noise: 0 } });
    assert.equal(doc.pairs.length, 2);
    const [d] = doc.differences;
    assert.deepEqual({ kind: d.kind, entry: d.entry, path: d.path, pattern: d.pattern, old: d.old, new: d.new, class: d.class },
      { kind: 'changed', entry: '/GET /v1/items#1', path: 'response.body.items[0].n', pattern: 'response.body.items[].n', old: 1, new: 2, class: 'real' });
    assert.match(d.id, /^[0-9a-f]{10}$/);
    assert.match(r.stderr, /^DIFF: 1 real/);
  });

  it('--json FILE writes the report and the ids are stable run after run', async () => {
    const out = join(t.dir, 'report.json');
    const r1 = await bb(['diff', same1, changed, '--json', out]);
    assert.equal(r1.code, 1);
    const a = JSON.parse(await readFile(out, 'utf8'));
    await bb(['diff', same1, changed, '--json', out]);
    const b = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(a.differences[0].id, b.differences[0].id);
  });

  it('exits 2 with one line for a missing file, an empty capture, an incomplete one and a bad config', async () => {
    const empty = await t.write('empty.har', har([]));
    const incomplete = await t.write('incomplete.har', capture([{ url: 'http://127.0.0.1:1/x', body: 'x' }], { complete: false }));
    const badConfig = await t.write('bad.config.json', { normalize: { patterns: [{ regex: '(' }] } });
    const cases: Array<[string[], RegExp]> = [
      [['diff', join(t.dir, 'nope.har'), same1], /nope\.har does not exist/],
      [['diff', same1, empty], /holds no entries/],
      [['diff', empty, empty, '--allow-incomplete'], /holds no entries/],
      [['diff', same1, incomplete], /incomplete capture.*--allow-incomplete/],
      [['diff', same1, same2, '--config', badConfig], /normalize\.patterns\[0\]\.regex: bad regular expression/],
      [['diff', same1], /Not enough non-option arguments|new/],
    ];
    for (const [args, re] of cases) {
      const r = await bb(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    const ok = await bb(['diff', incomplete, incomplete, '--allow-incomplete']);
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('refuses a report path it cannot write before it diffs: one line, exit 2, no report printed', async () => {
    const folder = t.path('a-folder');
    await mkdir(folder);
    const cases: Array<[string[], RegExp]> = [
      [['--json', join(t.dir, 'no-such-folder', 'r.json')], /cannot write --json .*r\.json \(its folder does not exist\): choose another path\./],
      [['--html', join(t.dir, 'no-such-folder', 'r.html')], /cannot write --html .*r\.html \(its folder does not exist\): choose another path\./],
      [['--junit', folder], /cannot write --junit .*: it is a folder; name a file\./],
      [['--json', same2], /already exists: choose another --json or pass --force/],
    ];
    for (const [flags, re] of cases) {
      const r = await bb(['diff', same1, changed, ...flags]);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.equal(r.stdout, '', `${flags.join(' ')}: the diff did not run`);
    }
  });

  it('says "1 pair", and its hint names the report it wrote, or how to write one', async () => {
    const one = await t.write('one.har', capture([{ url: 'http://127.0.0.1:5001/v1/one', body: { n: 1 } }]));
    const other = await t.write('one-changed.har', capture([{ url: 'http://127.0.0.1:5001/v1/one', body: { n: 2 } }]));
    const same = await bb(['diff', one, one]);
    assert.match(same.stdout, /^MATCH  \(1 pair; /);
    const plain = await bb(['diff', one, other], { NO_COLOR: '1' });
    assert.match(plain.stdout, /^DIFF: 1 real finding \(1 difference\)  \(1 pair; /);
    // No report was written: the hint says how to write the one bb known add reads.
    assert.match(plain.stdout, /bb known add FINDING-ID --from report\.json ratifies one \(bb diff --json report\.json writes it\)\.\n$/);
    const out = join(t.dir, 'hint-report.json');
    const written = await bb(['diff', one, other, '--json', out], { NO_COLOR: '1' });
    assert.ok(written.stdout.endsWith(`bb known add FINDING-ID --from ${out} ratifies one.\n`), written.stdout);
  });

  it('refuses broken.har with exit 2 and one line', async (t2) => {
    const fixtures = sharedFixture(t2);
    if (!fixtures) return;
    const r = await bb(['diff', join(fixtures, 'broken.har'), join(fixtures, 'chrome.har')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^bb: .*broken\.har is not valid JSON/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
