// --noise OLD2, kind for kind and value for value (issue 33 item 5): what
// varies between two runs of the old build hides only the same kind of
// difference at the same place, a changed value only when the new value has
// the shape the old runs' values share, an entry's presence in both
// directions alike (as many as the old runs showed), and every hidden row is
// counted. On both stores.
import { hexId } from '../helpers/ids.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCaptures, renderHtml, renderText, type DiffOptions, type DiffResult } from '../../diff/index.js';
import { capture, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

// The bounded path's sides in this thread, as diffBounded has them; their trip
// through workers is checked in store/bounded.test.ts and normalize/keyed.test.ts.
const PATHS: Array<[string, DiffOptions]> = [
  ['in memory', {}],
  ['bounded', { boundedThreshold: 0, workers: false }],
];

const hex12 = () => hexId();
const rows = (r: DiffResult) => r.differences.map((d) => `${d.class} ${d.kind} ${d.entry} ${d.path}`);
const show = (r: DiffResult) => renderText(r, { color: false, rows: true });

describe('noise from a second old run (issue 33 item 5)', () => {
  const t = tempDir();
  let n = 0;
  const write = async (specs: ExchangeSpec[]) => t.write(`c${n++}.har`, capture(specs));

  // A login that sets a random session cookie (with Max-Age and an Expires that moves with the clock) and answers a random reference.
  // `expiresIn` differs per run on purpose: two random draws rounded to the minute could meet (1 in ~170) and leave the old runs no noise.
  const login = (opts: { maxAge?: boolean; ref?: string; cookie?: boolean; expiresIn?: number } = {}): ExchangeSpec => ({
    method: 'POST',
    url: 'http://127.0.0.1:1/login',
    requestBody: { user: 'ann' },
    body: { ok: true, ref: opts.ref ?? hex12() },
    ...(opts.cookie === false ? {} : { responseHeaders: [['Set-Cookie', `sid=${hex12()}${opts.maxAge === false ? '' : '; Max-Age=3600'}; Expires=${new Date(Date.now() + (opts.expiresIn ?? 3_600_000)).toUTCString()}; Path=/; HttpOnly`]] as Array<[string, string]> }),
  });

  for (const [name, base] of PATHS) {
    it(`a cookie attribute the new build lost is real though the cookie varies between old runs (${name})`, async () => {
      const old = await write([login({ expiresIn: 3_600_000 })]);
      const old2 = await write([login({ expiresIn: 7_200_000 })]);
      const neu = await write([login({ maxAge: false, expiresIn: 10_800_000 })]);
      const r = await diffCaptures(old, neu, { ...base, noisePath: old2 });
      assert.deepEqual(rows(r).filter((x) => x.startsWith('real')), ['real removed /POST /login#1 response.cookies.sid.max-age'], show(r));
      assert.equal(r.exitCode, 1);
    });

    it(`a changed value is hidden only when it keeps the shape the old runs' values share (${name})`, async () => {
      const old = await write([login({ cookie: false })]);
      const old2 = await write([login({ cookie: false })]);
      const same = await write([login({ cookie: false })]);
      const ok = await diffCaptures(old, same, { ...base, noisePath: old2 });
      assert.equal(ok.exitCode, 0, show(ok));
      // 12 hex digits between the old runs; a word in the new build is a real change, not noise.
      const neu = await write([login({ ref: 'not-an-id', cookie: false })]);
      const r = await diffCaptures(old, neu, { ...base, noisePath: old2 });
      assert.deepEqual(rows(r).filter((x) => x.startsWith('real')), ['real changed /POST /login#1 response.body.ref'], show(r));
    });

    it(`an entry whose presence varies is noise missing or extra alike, as many as the old runs showed (${name})`, async () => {
      const item = (id: string): ExchangeSpec => ({ url: `http://127.0.0.1:1/items/${id}`, body: { ok: true } });
      const poll = (): ExchangeSpec => ({ url: 'http://127.0.0.1:1/poll', body: { ok: true } });
      const fixed = { url: 'http://127.0.0.1:1/meta', body: { v: 1 } };
      const old = await write([fixed, item(hex12()), poll(), poll(), poll()]);
      const old2 = await write([fixed, item(hex12()), poll(), poll(), poll(), poll()]);
      // A third random item (missing and extra against old) and one poll fewer.
      const neu = await write([fixed, item(hex12()), poll(), poll()]);
      const r = await diffCaptures(old, neu, { ...base, noisePath: old2 });
      assert.equal(r.counts.real, 0, show(r));
      assert.equal(r.exitCode, 0);
      const kinds = r.differences.map((d) => d.kind).sort();
      // Every hidden row is counted, by kind.
      assert.equal(r.noiseRun!.hidden.rows, r.counts.noise);
      assert.deepEqual(Object.keys(r.noiseRun!.hidden.byKind).sort(), [...new Set(kinds)].sort());
      assert.match(renderText(r, { color: false }), new RegExp(`${r.counts.noise} rows? hidden as noise \\(`));
      assert.match(await renderHtml(r), /hidden as noise/);
      // No poll at all in the new build: the old runs varied by one, so one row is noise and the others are real.
      const none = await write([fixed, item(hex12())]);
      const gone = await diffCaptures(old, none, { ...base, noisePath: old2 });
      const polls = gone.differences.filter((d) => d.route === 'GET /poll');
      assert.deepEqual(polls.map((d) => `${d.class} ${d.kind}`), ['noise missing', 'real missing', 'real missing'], show(gone));
      assert.equal(gone.exitCode, 1);
    });
  }
});
