// Cookies as fields (docs/diff.md "Cookies"): Cookie and Set-Cookie compare
// name by name and attribute by attribute, on both stores, so two runs of one
// build that set a random session cookie match, and a lost Max-Age or a
// changed SameSite is its own finding rather than one changed header line.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderText, type DiffResult } from '../../../diff/index.js';
import { diffAgreeing } from '../diff-bounded.js';
import { lifetime, requestCookies } from '../../../diff/normalize/cookies.js';
import { normalizeContext } from '../../../diff/normalize/context.js';
import { compileRules } from '../../../diff/normalize/rules.js';
import { OrdinalTable } from '../../../diff/normalize/ordinals.js';
import { compilePathRules } from '../../../diff/normalize/path-rules.js';
import type { Har } from '../../../capture/har.js';
import { capture, uuid, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const show = (r: DiffResult) => renderText(r, { color: false });

/** A redaction placeholder as capture/redact.ts writes one (an HMAC under the recording's key: random per recording). */
const redacted = () => `<redacted:${uuid().slice(0, 8)}>`;

/**
 * Every `EXPIRES(+S)` in a Set-Cookie becomes the date S seconds after the
 * entry's Date header, less `lag` seconds (a server computing Expires just
 * before it writes Date).
 */
function stamped(har: Har, lag = 0): Har {
  for (const e of har.log.entries) {
    const date = Date.parse(e.response.headers.find((h) => h.name === 'Date')!.value);
    for (const h of e.response.headers) {
      h.value = h.value.replace(/EXPIRES\(([+-]\d+)\)/g, (_m, s: string) => new Date(date + (Number(s) - lag) * 1000).toUTCString());
    }
  }
  return har;
}

/** One run of an app with a session cookie: login sets it, later calls send it back. */
function run(opts: { sid?: string; setCookie?: string; lag?: number } = {}): ExchangeSpec[] {
  const sid = opts.sid ?? redacted();
  const theme = redacted();
  return [
    {
      method: 'POST', url: 'http://127.0.0.1:3001/login', body: { ok: true },
      responseHeaders: [['Set-Cookie', opts.setCookie?.replace('SID', sid) ?? `sid=${sid}; Path=/; Max-Age=3600; Expires=EXPIRES(+3600); HttpOnly; SameSite=Lax`], ['Set-Cookie', `theme=${theme}; Path=/`]],
    },
    { url: 'http://127.0.0.1:3001/me', requestHeaders: [['Cookie', `sid=${sid}; theme=${theme}`]], body: { user: 'u' } },
    { url: 'http://127.0.0.1:3001/items', requestHeaders: [['Cookie', `sid=${sid}; theme=${theme}`]], body: { items: [1, 2] } },
  ];
}

describe('cookies as fields', () => {
  const t = tempDir();
  // Both stores (in memory, and bounded) must agree (diffAgreeing).
  const diff = (a: Har, b: Har, config?: unknown) => diffAgreeing(t, a, b, config);
  const real = (r: DiffResult) => r.findings.filter((f) => f.class === 'real').map((f) => `${f.kind} ${f.pattern}`);

  it('matches two runs that set a random session cookie (redacted) with Max-Age and an Expires seconds apart', async () => {
    const r = await diff(stamped(capture(run())), stamped(capture(run()), 2));
    assert.equal(r.verdict, 'match', show(r));
    assert.equal(r.counts.real, 0, show(r));
  });

  it('matches two runs whose session cookie is a bare uuid (not redacted)', async () => {
    const r = await diff(stamped(capture(run({ sid: uuid() }))), stamped(capture(run({ sid: uuid() }))));
    assert.equal(r.verdict, 'match', show(r));
  });

  it('reports a lost Max-Age as its own finding, and nothing else', async () => {
    const r = await diff(stamped(capture(run())), stamped(capture(run({ setCookie: 'sid=SID; Path=/; Expires=EXPIRES(+3600); HttpOnly; SameSite=Lax' }))));
    assert.equal(r.verdict, 'diff');
    assert.deepEqual(real(r), ['removed response.cookies.sid.max-age'], show(r));
    assert.equal(r.differences[0]!.old, '3600');
    assert.match(show(r), /response\.cookies\.sid\.max-age removed/);
  });

  it('reports a changed SameSite, and a flag that went away', async () => {
    const r = await diff(stamped(capture(run())), stamped(capture(run({ setCookie: 'sid=SID; Path=/; Max-Age=3600; Expires=EXPIRES(+3600); SameSite=Strict' }))));
    assert.deepEqual(real(r).sort(), ['changed response.cookies.sid.samesite', 'removed response.cookies.sid.httponly'], show(r));
    const samesite = r.differences.find((d) => d.path === 'response.cookies.sid.samesite')!;
    assert.deepEqual([samesite.old, samesite.new], ['Lax', 'Strict']);
  });

  it('compares Expires as the lifetime it gives: a cookie that now lasts a day is a finding', async () => {
    const r = await diff(stamped(capture(run())), stamped(capture(run({ setCookie: 'sid=SID; Path=/; Max-Age=86400; Expires=EXPIRES(+86400); HttpOnly; SameSite=Lax' }))));
    const expires = r.differences.find((d) => d.path === 'response.cookies.sid.expires')!;
    assert.deepEqual([expires.old, expires.new], ['<TS+1h>', '<TS+1d>'], show(r));
    assert.ok(real(r).includes('changed response.cookies.sid.max-age'), show(r));
  });

  // The Expires header, as a cookie's (it was <VOLATILE> whatever it said: "cache forever" becoming "already
  // expired" matched).
  it('compares the Expires header as the lifetime it gives from Date; a date as written (1970, 2099) as a value', async () => {
    const page = (expires: string): ExchangeSpec[] => [{ url: 'http://127.0.0.1:3001/page', body: 'hi', responseHeaders: [['Expires', expires], ['Cache-Control', 'max-age=3600']] }];
    const same = await diff(stamped(capture(page('EXPIRES(+3600)'))), stamped(capture(page('EXPIRES(+3600)')), 2));
    assert.equal(same.verdict, 'match', show(same));
    const longer = await diff(stamped(capture(page('EXPIRES(+3600)'))), stamped(capture(page('EXPIRES(+86400)'))));
    assert.deepEqual(longer.differences.map((d) => [d.path, d.old, d.new]), [['response.headers.expires', '<TS+1h>', '<TS+1d>']], show(longer));
    const written = await diff(stamped(capture(page('Thu, 01 Jan 2099 00:00:00 GMT'))), stamped(capture(page('Thu, 01 Jan 1970 00:00:00 GMT'))));
    assert.deepEqual(written.differences.map((d) => [d.path, d.old, d.new]), [['response.headers.expires', 'Thu, 01 Jan 2099 00:00:00 GMT', 'Thu, 01 Jan 1970 00:00:00 GMT']], show(written));
    // Not a date ("0": already expired, RFC 9111 §5.3): as written.
    const zero = await diff(stamped(capture(page('0'))), stamped(capture(page('EXPIRES(+3600)'))));
    assert.deepEqual(zero.differences.map((d) => [d.path, d.old, d.new]), [['response.headers.expires', '0', '<TS+1h>']], show(zero));
  });

  it('keeps a cleared cookie visibly empty, and a deletion date as written', async () => {
    const cleared = 'sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT';
    const r = await diff(stamped(capture(run({ setCookie: cleared }))), stamped(capture(run())));
    const value = r.differences.find((d) => d.path === 'response.cookies.sid.value')!;
    assert.equal(value.old, '', show(r));
    assert.match(String(value.new), /^<REDACTED:\d+>$/);
    const expires = r.differences.find((d) => d.path === 'response.cookies.sid.expires')!;
    assert.deepEqual([expires.old, expires.new], ['Thu, 01 Jan 1970 00:00:00 GMT', '<TS+1h>']);
  });

  it('reports a cookie the client no longer sends as a removed field', async () => {
    const b = run();
    b[2]!.requestHeaders = [['Cookie', b[2]!.requestHeaders![0]![1].replace(/; theme=.*/, '')]];
    const r = await diff(stamped(capture(run())), stamped(capture(b)));
    assert.deepEqual(real(r), ['removed request.cookies.theme'], show(r));
  });

  it('compares as today with the rules disabled by name: the whole headers differ', async () => {
    const disable = { normalize: { disable: ['cookies', 'redacted', 'http-dates', 'epoch-timestamps', 'issued-values'] } };
    const r = await diff(stamped(capture(run())), stamped(capture(run()), 2), disable);
    assert.equal(r.verdict, 'diff');
    assert.deepEqual(real(r).sort(), ['changed request.headers.cookie', 'changed response.headers.set-cookie[]'], show(r));
  });

  it('leaves a Cookie header the config masks as a masked header', async () => {
    const r = await diff(stamped(capture(run())), stamped(capture(run()), 2), { normalize: { headers: ['cookie', 'set-cookie'] } });
    assert.equal(r.verdict, 'match', show(r));
  });
});

describe('parsing cookies', () => {
  const rules = compileRules({ disable: ['redacted'] });
  const table = new OrdinalTable(rules.ordinalClasses);
  const ctx = normalizeContext({ rules, homes: [], table, routeKeys: [], pathRules: compilePathRules([]) });

  it('splits Cookie headers (HTTP/2 sends several) into name → value, a repeated name as a list', () => {
    const headers = [{ name: 'cookie', value: 'a=1; b= 2 ;;flag' }, { name: 'Cookie', value: 'a=3' }, { name: 'x', value: 'c=4' }];
    assert.deepEqual(requestCookies(headers, ctx), { a: ['1', '3'], b: '2', flag: '' });
    assert.equal(requestCookies([{ name: 'x', value: 'c=4' }], ctx), undefined);
  });

  it('turns Expires into the lifetime from the response time, rounded to the minute', () => {
    const from = Date.parse('2026-01-01T00:00:00Z');
    const at = (s: number) => new Date(from + s * 1000).toUTCString();
    const table: Array<[string, string | undefined]> = [
      [at(3600), '<TS+1h>'],
      [at(3598), '<TS+1h>'],
      [at(86400 * 30 + 5400), '<TS+30d1h30m>'],
      [at(20), '<TS>'],
      [at(-600), '<TS-10m>'],
      ['Thu, 01 Jan 1970 00:00:00 GMT', undefined],
      ['Fri, 31 Dec 9999 23:59:59 GMT', undefined],
      ['not a date', undefined],
      ['Wed, 01-Jan-2026 01:00:00 GMT', '<TS+1h>'],
    ];
    for (const [expires, want] of table) assert.equal(lifetime(expires, from), want, expires);
  });
});
