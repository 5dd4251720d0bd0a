// Issue 33's targets on recordings through bb's proxy of a REST app that
// issues 12-hex, nanoid, base62 and numeric ids and a random session cookie
// with Max-Age (test/e2e/issued-ids-service.ts): two runs of one build MATCH
// with no config; old → new finds exactly the five true changes (a removed
// cookie attribute, a status, a removed header, a value, a count) with no
// config; on a noisy build of the app (Max-Age, a worker header and a load
// figure vary run to run) exactly those five with --noise and with `bb
// noise`'s rules, the lost Max-Age never hidden as noise; after `bb known add --all`
// the pair MATCHes, and a build that regresses the status, the value and the
// count is three real findings again, exit 1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { driveIdsApp, startIdsApp, type IdsVersion } from './issued-ids-service.js';

interface Finding {
  id: string;
  class: string;
  kind: string;
  pattern: string;
  routes: string[];
}

/** The five true changes of version 2, as `kind pattern route`. */
const TRUE_CHANGES = [
  'changed response.body.limit GET /meta',
  'changed response.body.version GET /meta',
  'changed response.status POST /links',
  'removed response.cookies.sid.max-age POST /login',
  'removed response.headers.x-content-type-options GET /notes/<ISSUED>',
];

describe('a REST app issuing random ids of every shape, recorded through bb', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const t = tempDir();
  const hars: Record<string, string> = {};
  /** Records one session of `version` through a fresh proxy (its own bb home); the HAR's path. */
  const session = async (version: IdsVersion, noisy = false) => {
    const rec = await record(cleanups, await startIdsApp(cleanups, version, noisy));
    await driveIdsApp(`http://127.0.0.1:${rec.port}`);
    await rec.finish();
    return join(rec.dir, 'cap.har');
  };
  /** bb diff old new [args] with a JSON report; the exit code, the text and the real findings as `kind pattern route`. */
  const diff = async (a: string, b: string, args: string[] = []) => {
    const json = t.path(`report-${Object.keys(hars).length}-${Math.random().toString(36).slice(2)}.json`);
    const r = await runBb(['diff', a, b, '--json', json, ...args]);
    assert.notEqual(r.code, 2, r.stderr);
    const doc = JSON.parse(await readFile(json, 'utf8')) as { findings: Finding[] };
    const of = (c: string) => doc.findings.filter((f) => f.class === c).map((f) => `${f.kind} ${f.pattern} ${f.routes.join(', ')}`).sort();
    return { code: r.code, text: r.stdout, real: of('real'), noise: of('noise'), json };
  };

  before(async () => {
    hars.old = await session(1);
    hars.old2 = await session(1);
    hars.new = await session(2);
    hars.noisyOld = await session(1, true);
    hars.noisyOld2 = await session(1, true);
    hars.noisyNew = await session(2, true);
  });

  it('two runs of one build MATCH with no config', async () => {
    const r = await diff(hars.old!, hars.old2!);
    assert.equal(r.code, 0, r.text);
    assert.match(r.text, /^MATCH /, r.text);
  });

  it('old → new with no config: the five true changes, each a real finding, and nothing else', async () => {
    const r = await diff(hars.old!, hars.new!);
    assert.equal(r.code, 1, r.text);
    assert.deepEqual(r.real, TRUE_CHANGES, r.text);
    assert.match(r.text, /^DIFF: 5 real findings /, r.text);
  });

  it('a noisy app (Max-Age, a worker header and a load figure vary run to run): without help the noise is real, the changes too', async () => {
    const r = await diff(hars.noisyOld!, hars.noisyNew!);
    assert.equal(r.code, 1, r.text);
    for (const change of TRUE_CHANGES) assert.ok(r.real.includes(change), `${change}\n${r.text}`);
    assert.ok(r.real.some((f) => f.includes('response.headers.x-served-by')) && r.real.some((f) => f.includes('response.body.load')), r.text);
  });

  it('with --noise (a second old run) exactly the five are real: the noise hides changed values, never the lost Max-Age', async () => {
    const r = await diff(hars.noisyOld!, hars.noisyNew!, ['--noise', hars.noisyOld2!]);
    assert.equal(r.code, 1, r.text);
    assert.deepEqual(r.real, TRUE_CHANGES, r.text);
    // Max-Age changed between the old runs too: that hides a changed Max-Age, not a removed one.
    assert.deepEqual([...new Set(r.noise.map((f) => f.split(' ').slice(0, 2).join(' ')))], ['changed response.body.load', 'changed response.headers.x-served-by'], r.text);
    assert.match(r.text, /\n11 rows hidden as noise \(changed 11\); .* differs from .* in 12 rows\./, r.text);
  });

  it("with bb noise's rules exactly the five are real, and the rules hold no random value", async () => {
    const rules = t.path('noise-rules.json');
    const n = await runBb(['noise', hars.noisyOld!, hars.noisyOld2!, '-o', rules]);
    assert.equal(n.code, 0, n.stdout + n.stderr);
    const text = await readFile(rules, 'utf8');
    // Entries named by route with a glob for the id, never the id; every path rule a pattern, none erasing its field.
    const doc = JSON.parse(text) as { normalize: { paths: Array<{ where: string; path: string; pattern?: string; ignore?: boolean }> }; known: unknown[] };
    for (const p of doc.normalize.paths) assert.ok(/^\/(GET|POST) \/[a-z]+(\/\*)?#1$/.test(p.where) && typeof p.pattern === 'string' && p.ignore !== true, JSON.stringify(p));
    assert.deepEqual([...new Set(doc.normalize.paths.map((p) => p.path))].sort(), ['response.body.load', 'response.cookies.sid.max-age', 'response.headers.x-served-by'], text);
    const r = await diff(hars.noisyOld!, hars.noisyNew!, ['--config', rules]);
    assert.equal(r.code, 1, r.text);
    assert.deepEqual(r.real, TRUE_CHANGES, `${r.text}\n${text}`);
    const both = await diff(hars.noisyOld!, hars.noisyNew!, ['--config', rules, '--noise', hars.noisyOld2!]);
    assert.deepEqual(both.real, TRUE_CHANGES, both.text);
    // A third run of the build matches with them.
    const third = await diff(hars.noisyOld!, await session(1, true), ['--config', rules]);
    assert.equal(third.code, 0, `${third.text}\n${text}`);
  });

  it('ratified with bb known add --all: MATCH; a build that regresses the status, the value and the count is three real findings, exit 1', async () => {
    const first = await diff(hars.old!, hars.new!);
    const config = t.path('known.json');
    const add = await runBb(['known', 'add', '--all', '--from', first.json, '--reason', 'upgrade to 2.0', '--config', config]);
    assert.equal(add.code, 0, add.stdout + add.stderr);
    const ratified = await diff(hars.old!, hars.new!, ['--config', config]);
    assert.equal(ratified.code, 0, ratified.text);
    assert.match(ratified.text, /^MATCH with 5 known\b/, ratified.text);
    const regressed = await session(3);
    const r = await diff(hars.old!, regressed, ['--config', config]);
    assert.equal(r.code, 1, r.text);
    assert.deepEqual(r.real, ['changed response.body.limit GET /meta', 'changed response.body.version GET /meta', 'changed response.status POST /links'], r.text);
    assert.match(r.text, /was ratified as 201 → 200, now 201 → 500/, r.text);
    assert.match(r.text, /was ratified as "1\.4" → "2\.0", now "1\.4" → "2\.1"/, r.text);
    assert.match(r.text, /was ratified as 50 → 100, now 50 → 99/, r.text);
  });
});
