
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { globMatcher } from '../../core/index.js';
import { hostMatcher } from '../../proxy/forward.js';
import { diffCaptures, validateDiffConfig } from '../../diff/index.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { matchGlob } from '../../core/glob.js';

describe('globMatcher', () => {
  it('reads * as any run (slashes included), ? as one character, the rest literally', () => {
    const m = globMatcher('*/GET /v?/items*');
    assert.equal(m('page/GET /v1/items#1'), true);
    assert.equal(m('a/b/GET /v2/items'), true);
    assert.equal(m('page/GET /v10/items#1'), false, '? is exactly one character');
    assert.equal(m('page/GET /v/items'), false);
    assert.equal(globMatcher('a.b(c)[d]+$')('a.b(c)[d]+$'), true);
    assert.equal(globMatcher('a.b')('aXb'), false, '. is literal');
    assert.equal(globMatcher('line*')('line one\nline two'), true, '* crosses newlines');
  });

  it('is case-sensitive unless asked', () => {
    assert.equal(globMatcher('*/GET /Users*')('p/GET /users#1'), false);
    assert.equal(globMatcher('*.Example.COM', { ignoreCase: true })('api.example.com'), true);
  });

  it('is the same glob in forward mode hosts: ? is one character, case does not matter', () => {
    const only = hostMatcher(['api?.example.com']);
    assert.equal(only('API1.Example.com'), true);
    assert.equal(only('api12.example.com'), false);
    assert.equal(only('api.example.com'), false);
  });
});

describe('a known entry with ? in its where', () => {
  const t = tempDir();

  it('ratifies the difference on every route the ? stands for, and no other', async () => {
    const run = (v: number) => capture([
      { url: 'http://127.0.0.1:1/v1/items', body: { v } },
      { url: 'http://127.0.0.1:1/v2/items', body: { v } },
      { url: 'http://127.0.0.1:1/v10/items', body: { v } },
    ]);
    const dir = t;
    const oldPath = await dir.write('old.har', run(1));
    const newPath = await dir.write('new.har', run(2));
    const config = validateDiffConfig({ known: [{ where: '*/GET /v?/items#*', path: 'response.body.v', reason: 'v bumped' }] });
    const r = await diffCaptures(oldPath, newPath, { config });
    const byRoute = r.differences.map((d) => [d.entry.replace(/^.*\/GET /, ''), d.class]).sort();
    assert.deepEqual(byRoute, [['/v1/items#1', 'known'], ['/v10/items#1', 'real'], ['/v2/items#1', 'known']]);
  });
});

// core/glob.ts matches without a backtracking regex: a glob of many stars
// against a long captured URL costs at most (glob length + 1) × (text length + 1)
// steps (issue 34 item 12), and means exactly what the regex it replaces meant.
/** The regex every glob compiled to before issue 34: the semantics to keep. */
function regexOf(glob: string, ignoreCase = false): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, ignoreCase ? 'si' : 's');
}

// A fixed-seed generator (mulberry32), so a failure names a case that repeats.
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('matchGlob', () => {
  it('matches a 7-star glob against a 3,000-character URL in at most (m + 1) × (n + 1) steps', () => {
    const glob = '*/GET /*a*a*a*a*a*b';
    const url = `page/GET /${'a'.repeat(3000)}#1`;
    const meter = { steps: 0 };
    assert.equal(matchGlob(glob, url, {}, meter), false);
    assert.ok(meter.steps <= (glob.length + 1) * (url.length + 1), `${meter.steps} steps`);
    const hit = { steps: 0 };
    assert.equal(matchGlob(glob, `${url}b`, {}, hit), true);
    assert.ok(hit.steps <= (glob.length + 1) * (url.length + 2), `${hit.steps} steps`);
  });

  it('stays within the bound for a host glob of many stars in forward mode', () => {
    const host = `${'x'.repeat(250)}.test`;
    const meter = { steps: 0 };
    assert.equal(matchGlob('*X*X*X*X*X*X*.example', host, { ignoreCase: true }, meter), false);
    assert.ok(meter.steps <= 22 * (host.length + 1), `${meter.steps} steps`);
  });

  it('answers as the regex it replaces did, on 20,000 seeded short globs and texts', () => {
    const next = random(34);
    const alphabet = ['a', 'b', 'A', '*', '?', '.', '/', '\n', 'é', 'É', '\u0130', 'ſ', 'S', '(', '\\'];
    const pick = (n: number, chars: string[]) => Array.from({ length: Math.floor(next() * n) }, () => chars[Math.floor(next() * chars.length)]).join('');
    for (let i = 0; i < 20_000; i++) {
      const glob = pick(7, alphabet);
      const text = pick(9, alphabet.filter((c) => c !== '*' && c !== '?').concat(['*', '?']));
      const ignoreCase = next() < 0.5;
      const want = regexOf(glob, ignoreCase).test(text);
      assert.equal(globMatcher(glob, { ignoreCase })(text), want, `${JSON.stringify(glob)} on ${JSON.stringify(text)}${ignoreCase ? ' (ignoring case)' : ''}`);
    }
  });
});
