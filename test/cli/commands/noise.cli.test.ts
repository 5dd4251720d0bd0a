// bb noise writes rules that will match again (issue 33 item 5): shapes
// instead of random values, globs instead of random ids in entry ids and
// keys, known entries for what comes and goes (both directions), and never a
// rule that erases a whole field; with them, a third run of the build
// matches and a real change of the new build stays real.
import { hexId, nanoId } from '../../helpers/ids.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { runBb as bb } from '../../helpers/cli.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const hex12 = () => hexId();
const nano = nanoId;

describe('bb noise (issue 33 item 5)', () => {
  const t = tempDir();

  // One run of a build: a created record with a random 12-hex id fetched by its path, a nanoid token,
  // a session whose random key names a field, an epoch-ms clock; `changes` is what a new build does differently.
  const run = (changes: { status?: number; idShape?: 'uuid' } = {}) => {
    const id = changes.idShape === 'uuid' ? crypto.randomUUID() : hex12();
    const sessionKey = hex12();
    const specs: ExchangeSpec[] = [
      { method: 'POST', url: 'http://127.0.0.1:1/records', requestBody: { name: 'a' }, status: changes.status ?? 201, body: { id, name: 'a', token: nano() } },
      { url: `http://127.0.0.1:1/records/${id}`, body: { id, name: 'a', at: 1_700_000_000_000 + Math.floor(Math.random() * 1e9) } },
      { url: 'http://127.0.0.1:1/sessions', body: { [sessionKey]: { user: 'ann' } } },
    ];
    return { specs, ids: [id, sessionKey] };
  };

  it('writes rules without random values that match a third run and keep real changes real', async () => {
    const a = run();
    const b = run();
    const fa = await t.write('a.har', capture(a.specs));
    const fb = await t.write('b.har', capture(b.specs));
    const rules = t.path('rules.json');
    const r = await bb(['noise', fa, fb, '-o', rules]);
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(rules, 'utf8');
    const doc = JSON.parse(text) as { normalize: { paths: Array<Record<string, unknown>> }; known: Array<Record<string, unknown>> };
    // No literal random value anywhere, and no rule that erases a field (each path rule has a pattern, none ignores).
    for (const id of [...a.ids, ...b.ids]) assert.ok(!text.includes(id), `rules hold the random ${id}:\n${text}`);
    for (const p of doc.normalize.paths) {
      assert.equal(typeof p.pattern, 'string', JSON.stringify(p));
      assert.notEqual(p.ignore, true, JSON.stringify(p));
    }
    // The same build a third time: MATCH, and no rule is stale.
    const c = await t.write('c.har', capture(run().specs));
    const third = await bb(['diff', fa, c, '--config', rules]);
    assert.equal(third.code, 0, `${third.stdout}\n${text}`);
    assert.match(third.stdout, /^MATCH/);
    assert.doesNotMatch(third.stdout, /stale/);
    // A new build that answers 200 and issues uuids: both are real with these rules.
    const n = await t.write('n.har', capture(run({ status: 200, idShape: 'uuid' }).specs));
    const changed = await bb(['diff', fa, n, '--config', rules, '--rows']);
    assert.equal(changed.code, 1, changed.stdout);
    assert.match(changed.stdout, /response\.status changed 201 → 200/);
    assert.match(changed.stdout, /response\.body\.id changed/);
  });

  it('an entry or field that comes and goes is a known entry both ways, never erased', async () => {
    const base = (extra: boolean, field: boolean): ExchangeSpec[] => [
      { url: 'http://127.0.0.1:1/a', body: { v: 1, ...(field ? { debug: 'x' } : {}) } },
      ...(extra ? [{ url: 'http://127.0.0.1:1/ping', body: 'pong' }] : []),
    ];
    const fa = await t.write('p1.har', capture(base(false, true)));
    const fb = await t.write('p2.har', capture(base(true, false)));
    const rules = t.path('p-rules.json');
    const r = await bb(['noise', fa, fb, '-o', rules]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(await readFile(rules, 'utf8')) as { normalize: { paths: unknown[] }; known: Array<{ where: string; path: string; kind: string }> };
    assert.deepEqual(doc.normalize.paths, []);
    assert.deepEqual(doc.known.map((k) => `${k.where} ${k.path} ${k.kind}`), ['/GET /a#1 response.body.debug removed', '/GET /a#1 response.body.debug added', '/GET /ping#1  missing', '/GET /ping#1  extra']);
    // The other direction passes too, shown as known.
    const back = await bb(['diff', fb, fa, '--config', rules]);
    assert.equal(back.code, 0, back.stdout);
    assert.match(back.stdout, /^MATCH with 2 known/);
  });
});
