// Keys named like Object.prototype's members are data like any other (issue 34
// item 11): `{"__proto__":{"role":"user"}}` against `…"admin"…` is a difference,
// not a MATCH, and so are such names in queries, headers and reports.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runBb } from '../helpers/cli.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

type Row = { path: string; kind: string; old?: unknown; new?: unknown };

/** bb diff --json of two one-exchange captures whose JSON bodies are given as text. */
async function diffOf(oldSpec: ExchangeSpec & { text?: string }, newSpec: ExchangeSpec & { text?: string }): Promise<{ code: number; rows: Row[]; stderr: string; dir: ReturnType<typeof tempDir> }> {
  const t = tempDir();
  // The helper serializes `body`; a literal text keeps `__proto__` as the producer wrote it.
  const har = (s: ExchangeSpec & { text?: string }) => {
    const doc = capture([{ ...s, body: s.text === undefined ? s.body : 'PLACEHOLDER', mime: 'application/json' }]);
    if (s.text !== undefined) doc.log.entries[0]!.response.content.text = s.text;
    return doc;
  };
  const a = await t.write('old.har', har(oldSpec));
  const b = await t.write('new.har', har(newSpec));
  const r = await runBb(['diff', a, b, '--json', '-']);
  const rows = r.stdout ? (JSON.parse(r.stdout) as { differences: Row[] }).differences : [];
  return { code: r.code, rows, stderr: r.stderr, dir: t };
}

const rowsOf = (rows: Row[]) => rows.map((d) => [d.kind, d.path, d.old, d.new]);

describe('bb diff with keys named __proto__, toString, constructor', () => {
  it('compares the subtree under a __proto__ key', async () => {
    const r = await diffOf({ url: 'http://127.0.0.1:1/me', text: '{"__proto__":{"role":"user"}}' }, { url: 'http://127.0.0.1:1/me', text: '{"__proto__":{"role":"admin"}}' });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(rowsOf(r.rows), [['changed', 'response.body.__proto__.role', 'user', 'admin']]);
  });

  it('finds a __proto__ key added, and a toString key removed', async () => {
    const r = await diffOf({ url: 'http://127.0.0.1:1/me', text: '{"toString":1,"constructor":{"a":1}}' }, { url: 'http://127.0.0.1:1/me', text: '{"__proto__":[1],"constructor":{"a":2}}' });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(rowsOf(r.rows).sort(), [
      ['added', 'response.body.__proto__', undefined, [1]],
      ['changed', 'response.body.constructor.a', 1, 2],
      ['removed', 'response.body.toString', 1, undefined],
    ]);
  });

  it('compares a query parameter and a header named __proto__', async () => {
    const r = await diffOf(
      { url: 'http://127.0.0.1:1/me?__proto__=user', responseHeaders: [['__proto__', 'a']], body: { ok: 1 } },
      { url: 'http://127.0.0.1:1/me?__proto__=admin', responseHeaders: [['__proto__', 'b']], body: { ok: 1 } },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(rowsOf(r.rows).sort(), [
      ['changed', 'request.query.__proto__', 'user', 'admin'],
      ['changed', 'response.headers.__proto__', 'a', 'b'],
    ]);
  });

  it('gives the same verdict with the text and HTML reports', async () => {
    const t = tempDir();
    const har = (role: string) => {
      const doc = capture([{ url: 'http://127.0.0.1:1/me', body: 'PLACEHOLDER', mime: 'application/json' }]);
      doc.log.entries[0]!.response.content.text = `{"__proto__":{"role":"${role}"}}`;
      return doc;
    };
    const a = await t.write('old.har', har('user'));
    const b = await t.write('new.har', har('admin'));
    const r = await runBb(['diff', a, b, '--html', t.path('report.html')]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /__proto__\.role/);
    assert.doesNotMatch(r.stdout, /MATCH/);
  });
});
