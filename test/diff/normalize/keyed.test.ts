// Redaction placeholders compared as the secrets they stand for (docs/diff.md
// "Redacted secrets"): the same keyed placeholder on both sides is the same
// secret wherever it sits, and two different placeholders at one aligned
// place are equal when they correspond one to one across the run (two
// recordings under different keys, a session cookie the server made up each
// run). A header that only one side carries in earlier entries must not shift
// the numbers the others compare by. Every case runs on the in-memory store,
// the bounded store in this thread, and the bounded store with its sides in
// worker threads (each side its own ordinal table): all three agree.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderText, validateDiffConfig, type DiffResult } from '../../../diff/index.js';
import { diffAgreeing, diffBounded } from '../diff-bounded.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { hexId } from '../../helpers/ids.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();

/** A placeholder as capture/redact.ts writes one: 8 hex digits of a keyed HMAC. */
const placeholder = (): string => `<redacted:${hexId(4)}>`;

/** Five GETs; `auth[i]`, when given, is the Authorization the i-th sent. */
function run(auth: Array<string | undefined>): ExchangeSpec[] {
  return ['/items', '/items/1', '/me', '/items?page=2', '/stats'].map((path, i) => ({
    url: `http://127.0.0.1:3001${path}`,
    body: { path },
    ...(auth[i] ? { requestHeaders: [['Authorization', `Bearer ${auth[i]}`]] as Array<[string, string]> } : {}),
  }));
}

/** The rows as `KIND PATH OLD → NEW @entry`, sorted. */
const rows = (r: DiffResult): string[] =>
  r.differences.map((d) => `${d.kind} ${d.path} ${JSON.stringify(d.old ?? null)} → ${JSON.stringify(d.new ?? null)} @${d.entry}`).sort();

/**
 * Diffs on all three paths, which must agree; the in-memory result. With a
 * `config` holding path rules the stores agree on the rows (the pairs' own
 * objects differ there already: the bounded store has no equal-pair shortcut
 * under path rules, and a pair compared in full names its request line).
 */
async function diff(a: ExchangeSpec[], b: ExchangeSpec[], config?: unknown): Promise<DiffResult> {
  const [ha, hb] = [capture(a), capture(b)];
  const name = hexId();
  const [pa, pb] = [await tmp.write(`${name}-a.har`, ha), await tmp.write(`${name}-b.har`, hb)];
  const options = config ? { config: validateDiffConfig(config) } : {};
  const r = config ? await diffCaptures(pa, pb, options) : await diffAgreeing(tmp, ha, hb);
  if (config) assert.deepEqual(rows(await diffBounded(pa, pb, options)), rows(r), 'the bounded store agrees');
  const inWorkers = await diffCaptures(pa, pb, { ...options, boundedThreshold: 0, workers: true });
  assert.deepEqual(rows(inWorkers), rows(r), 'the bounded store with its sides in workers agrees');
  return r;
}

describe('redaction placeholders compare as the secrets they stand for', () => {
  it('a secret --header added to every replayed request reads as the same secret where the original sent it', async () => {
    const s = placeholder();
    const r = await diff(run([undefined, undefined, s]), run([s, s, s, s, s]));
    assert.deepEqual(rows(r), [
      'added request.headers.authorization null → "Bearer <REDACTED:1>" @/GET /items#1',
      'added request.headers.authorization null → "Bearer <REDACTED:1>" @/GET /items#2',
      'added request.headers.authorization null → "Bearer <REDACTED:1>" @/GET /items/1#1',
      'added request.headers.authorization null → "Bearer <REDACTED:1>" @/GET /stats#1',
    ], renderText(r, { color: false }));
  });

  it('reads the same with a path rule in the config (the bounded store then takes each side\'s placeholders after the rules)', async () => {
    const s = placeholder();
    const config = { normalize: { paths: [{ path: 'response.body.path', pattern: '^/items', replace: '/ITEMS' }] } };
    const r = await diff(run([undefined, undefined, s]), run([s, s, s, s, s]), config);
    assert.equal(r.differences.length, 4, renderText(r, { color: false }));
    assert.ok(r.differences.every((d) => d.kind === 'added' && d.new === 'Bearer <REDACTED:1>'), renderText(r, { color: false }));
  });

  it('recorded under two keys, placeholders that correspond one to one are equal, however early one side used its own', async () => {
    const [x, y] = [placeholder(), placeholder()];
    const r = await diff(run([undefined, undefined, x, x]), run([y, undefined, y, y]));
    assert.deepEqual(rows(r), ['added request.headers.authorization null → "Bearer <REDACTED:1>" @/GET /items#1'], renderText(r, { color: false }));
  });

  it('a placeholder padded to its secret\'s length (a JWT masked in a gRPC message) is that secret, whatever its padding', async () => {
    // Each run's login issued its own token, of its own length; the client sent it back.
    const padded = (n: number) => `${placeholder().slice(0, -1)}${'~'.repeat(n)}>`;
    const flow = (token: string): ExchangeSpec[] => [
      { url: 'http://127.0.0.1:3001/login', method: 'POST', body: { token } },
      { url: 'http://127.0.0.1:3001/me', body: { token, name: 'ann' } },
    ];
    const [a, b] = [padded(77), padded(81)];
    assert.deepEqual(rows(await diff(flow(a), flow(b))), []);
    // The same token twice on one side, two on the other: the correspondence breaks, a real change.
    const r = await diff(flow(a), [flow(b)[0]!, flow(padded(60))[1]!]);
    assert.deepEqual(rows(r).map((x) => x.split(' ').slice(0, 2).join(' ')), ['changed response.body.token'], renderText(r, { color: false }));
  });

  it('a secret that changed at one place while it still pairs with itself elsewhere is a real change, met first or last', async () => {
    const [x, y] = [placeholder(), placeholder()];
    for (const [a, b] of [
      [[x, x, x], [y, x, x]],
      [[x, x, x], [x, x, y]],
    ]) {
      const r = await diff(run(a!), run(b!));
      assert.equal(r.differences.length, 1, renderText(r, { color: false }));
      const [d] = r.differences;
      assert.equal(d!.kind, 'changed');
      assert.equal(d!.path, 'request.headers.authorization');
      assert.notEqual(d!.old, d!.new);
      assert.equal(r.counts.real, 1);
    }
  });

  it('a placeholder that breaks its correspondence (X ↔ Y here, X ↔ Z there) is a real change', async () => {
    const [x, y, z] = [placeholder(), placeholder(), placeholder()];
    const r = await diff(run([x, x, x]), run([y, y, z]));
    assert.deepEqual(rows(r), ['changed request.headers.authorization "Bearer <REDACTED:1>" → "Bearer <REDACTED:2>" @/GET /me#1'], renderText(r, { color: false }));
  });

  it('two secrets swapped between two places are two real changes', async () => {
    const [x, y] = [placeholder(), placeholder()];
    const r = await diff(run([x, y, x, y]), run([x, y, y, x]));
    assert.equal(r.differences.filter((d) => d.kind === 'changed').length, 2, renderText(r, { color: false }));
  });
});
