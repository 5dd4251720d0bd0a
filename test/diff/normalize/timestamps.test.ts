// Timestamps by value (docs/diff.md "Built-in rules"): epoch seconds and
// milliseconds under any key, and epoch digits and HTTP dates in headers and
// text, are timestamps when they fall inside the capture's own time window
// (a day each way); far from it they are values and compare as such.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { diffCaptures, renderText, type DiffResult } from '../../../diff/index.js';
import { startRecording } from '../../../scenario/index.js';
import { diffAgreeing } from '../diff-bounded.js';
import { captureWindow, epochsInText, httpDatesInText, isEpochInWindow, isoTimesInText, runtimeDatesInText, DAY_MS } from '../../../diff/normalize/timestamps.js';
import type { Har, HarEntry } from '../../../capture/har.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const show = (r: DiffResult) => renderText(r, { color: false });

/** Every `NOW_MS(+N)` / `NOW_S(+N)` in a body or header becomes the entry's start (+ N seconds) in epoch ms / seconds. */
function stamped(har: Har): Har {
  for (const e of har.log.entries) {
    const start = Date.parse(e.startedDateTime);
    const fill = (s: string) =>
      s.replace(/NOW_(MS|S)\(([+-]\d+)\)/g, (_m, unit: string, n: string) => {
        const ms = start + Number(n) * 1000;
        return String(unit === 'MS' ? ms : Math.floor(ms / 1000));
      }).replace(/HTTPDATE\(([+-]\d+)\)/g, (_m, n: string) => new Date(start + Number(n) * 1000).toUTCString());
    for (const h of e.response.headers) h.value = fill(h.value);
    if (e.response.content.text) e.response.content.text = fill(e.response.content.text);
  }
  return har;
}

/** One run of an app returning epoch fields under short keys; `skew` seconds move every time it reports. */
function run(skew: number, extra: Partial<ExchangeSpec> = {}): ExchangeSpec[] {
  const at = (unit: 'MS' | 'S') => `NOW_${unit}(${skew >= 0 ? '+' : ''}${skew})`;
  return [
    { url: 'http://127.0.0.1:3001/a', mime: 'application/json', body: `{"t":${at('MS')},"s":${at('S')},"list":[${at('MS')}],"n":42}`, responseHeaders: [['X-Generated', at('S')], ['X-Served', `HTTPDATE(${skew >= 0 ? '+' : ''}${skew})`]] },
    { url: 'http://127.0.0.1:3001/log', body: `built at ${at('MS')} on node` },
    ...(extra.url ? [extra as ExchangeSpec] : []),
  ];
}

describe('timestamps by value', () => {
  const t = tempDir();
  const diff = (a: Har, b: Har, config?: unknown) => diffAgreeing(t, a, b, config);

  it('matches epoch seconds and ms under short keys, in headers and in text, that differ between runs', async () => {
    const r = await diff(stamped(capture(run(0))), stamped(capture(run(7))));
    assert.equal(r.verdict, 'match', show(r));
  });

  it('reports an epoch value far outside the window as a changed value', async () => {
    const fixed = (v: number) => ({ url: 'http://127.0.0.1:3001/fixed', body: { t: v } });
    const r = await diff(stamped(capture(run(0, fixed(1500000000000)))), stamped(capture(run(0, fixed(1500000000001)))));
    assert.deepEqual(r.differences.map((d) => [d.path, d.old, d.new]), [['response.body.t', 1500000000000, 1500000000001]], show(r));
  });

  it('reports a number changed to one that is not a timestamp', async () => {
    const r = await diff(stamped(capture(run(0))), patchN(stamped(capture(run(0))), 43));
    assert.deepEqual(r.differences.map((d) => [d.path, d.old, d.new]), [['response.body.n', 42, 43]], show(r));
  });

  it('compares as today with epoch-timestamps and http-dates disabled by name', async () => {
    const r = await diff(stamped(capture(run(0))), stamped(capture(run(7))), { normalize: { disable: ['epoch-timestamps', 'http-dates'] } });
    assert.deepEqual(r.differences.map((d) => d.path).sort(), [
      'response.body', 'response.body.list[0]', 'response.body.s', 'response.body.t', 'response.headers.x-generated', 'response.headers.x-served',
    ], show(r));
  });
});

/** The first entry's body with `n` set to `n`. */
function patchN(har: Har, n: number): Har {
  const e: HarEntry = har.log.entries[0]!;
  e.response.content.text = e.response.content.text!.replace('"n":42', `"n":${n}`);
  return har;
}

describe('the capture window', () => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const entry = (at: number, time = 0) => ({ startedDateTime: new Date(at).toISOString(), time }) as HarEntry;
  const w = captureWindow(entry(start), entry(start + 60_000, 5000))!;

  it('spans the first and last entries (the last one\'s duration too) and the pages, a day each way', () => {
    assert.deepEqual(w, { from: start - DAY_MS, to: start + 65_000 + DAY_MS });
    const page = { id: 'p', title: 'p', startedDateTime: new Date(start - 3_600_000).toISOString(), pageTimings: {} };
    assert.equal(captureWindow(entry(start), undefined, [page])!.from, start - 3_600_000 - DAY_MS);
    assert.equal(captureWindow(undefined, undefined, []), undefined);
    assert.equal(captureWindow({ startedDateTime: 'not a date', time: 0 } as HarEntry, undefined), undefined);
  });

  it('tells epoch seconds and milliseconds inside it from other numbers', () => {
    const s = Math.floor(start / 1000);
    const table: Array<[number, boolean]> = [
      [start, true], [start + DAY_MS, true], [start - DAY_MS - 1, false], [s, true], [s + 0.25, true], [start + 0.5, false],
      [42, false], [1500000000000, false], [1500000000, false], [s * 1_000_000, false],
    ];
    for (const [n, want] of table) assert.equal(isEpochInWindow(n, w), want, String(n));
  });

  it('finds epoch digits and HTTP dates inside text, not inside longer numbers, words or ids', () => {
    const ms = String(start);
    const s = String(start / 1000);
    assert.equal(epochsInText(`at ${ms}, t=${s}.5; id_${s}`, w), 'at <TS>, t=<TS>; id_<TS>');
    for (const kept of [`${ms}1`, `a${s}`, `0.${ms}`, `${s}ab`, '1500000000000']) assert.equal(epochsInText(kept, w), kept);
    assert.equal(epochsInText(ms, undefined), ms);
    // Microseconds and nanoseconds (Go's UnixNano as a string); a Discord snowflake and an epoch in ns of 2017 stay.
    assert.equal(epochsInText(`us=${ms}123 ns=${ms}123456`, w), 'us=<TS> ns=<TS>');
    for (const kept of [`${ms}12`, `${ms}1234`, '1316091837593817088', '1500000000000123456']) assert.equal(epochsInText(kept, w), kept);
    assert.equal(httpDatesInText('served Thu, 01 Jan 2026 00:00:05 GMT; Wed, 01-Jan-2026 01:00:00 GMT', w), 'served <TS>; <TS>');
    assert.equal(httpDatesInText('Thu, 01 Jan 1970 00:00:00 GMT', w), 'Thu, 01 Jan 1970 00:00:00 GMT');
  });

  it('finds ISO date-times inside the window in any zone and form; a fixed one far from it is a value', () => {
    const inside = ['2026-01-01T00:00:05Z', '2026-01-01 10:00', '2026-01-01T05:30:00.123+05:30', '2025-12-31T19:00:00,5-0500', '2026-01-01T00:01:00.123456789Z'];
    for (const x of inside) assert.equal(isoTimesInText(`at ${x}.`, w), 'at <TS>.', x);
    // An expiry far ahead, a birth time, a date of another year: values (they were <TS> whatever their date).
    for (const x of ['2099-01-01T00:00:00Z', '1990-05-01T08:00:00Z', '2025-06-01T12:00:00+02:00']) assert.equal(isoTimesInText(x, w), x);
    assert.equal(isoTimesInText('from 2026-01-01T00:00:00Z until 2099-12-31T23:59:59Z', w), 'from <TS> until 2099-12-31T23:59:59Z');
    // Without a window (nothing in the capture has a time): every date-time, as before windows.
    assert.equal(isoTimesInText('2099-01-01T00:00:00Z', undefined), '<TS>');
  });
});

describe('ISO date-times by value', () => {
  const t = tempDir();
  // A response stamped at the run's time (NOW), and a fixed expiry the new build changed to the run's time.
  const iso = (expires: string): ExchangeSpec[] => [{ url: 'http://127.0.0.1:3001/token', mime: 'application/json', body: `{"issued":"ISO(+0)","expires":"${expires}"}` }];
  const filled = (har: Har, skew: number): Har => {
    for (const e of har.log.entries) {
      const start = Date.parse(e.startedDateTime);
      e.response.content.text = e.response.content.text!.replace(/ISO\(\+(\d+)\)/g, (_m, n: string) => new Date(start + (Number(n) + skew) * 1000).toISOString());
    }
    return har;
  };
  it('compares the run\'s own times as <TS> and a fixed one as a value: an expiry moved from 2099 to now is a real finding', async () => {
    const same = await diffAgreeing(t, filled(capture(iso('2099-01-01T00:00:00Z')), 0), filled(capture(iso('2099-01-01T00:00:00Z')), 9));
    assert.equal(same.verdict, 'match', show(same));
    const moved = await diffAgreeing(t, filled(capture(iso('2099-01-01T00:00:00Z')), 0), filled(capture(iso('ISO(+3600)')), 0));
    assert.deepEqual(moved.differences.map((d) => [d.path, d.old, d.new]), [['response.body.expires', '2099-01-01T00:00:00Z', '<TS>']], show(moved));
  });
});

/** C's asctime form of `d` in UTC (`Mon Dec  7 21:33:01 2026`), a zone before the year when given (Go's UnixDate). */
function asctime(d: Date, zone?: string): string {
  const [day, month] = [d.toUTCString().slice(0, 3), d.toUTCString().slice(8, 11)];
  return `${day} ${month} ${String(d.getUTCDate()).padStart(2, ' ')} ${d.toISOString().slice(11, 19)}${zone ? ` ${zone}` : ''} ${d.getUTCFullYear()}`;
}

describe("runtimes' own date strings and stopwatch keys, from a real server", () => {
  // A server that writes its clock as Node does with no format in mind, and how long things took under the keys
  // servers use for it: two runs of it, recorded by bb, compare equal; a fixed date in the same forms is a value.
  const t = tempDir();
  const serve = (fixed: Date) =>
    createServer((_req, res) => {
      const now = new Date();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          toString: String(now),
          text: `Generated ${now}`,
          enUS: now.toLocaleString('en-US'),
          enGB: now.toLocaleString('en-GB'),
          enUSutc: now.toLocaleString('en-US', { timeZone: 'UTC' }),
          // C's asctime (Python's time.ctime), Java's Date#toString, Go's Time#String with its monotonic reading.
          asctime: asctime(now),
          java: asctime(now, 'UTC').replace(/ {2}(\d) /, ' 0$1 '),
          log: `[${asctime(now)}] GET /clock 200`,
          go: `${now.toISOString().replace('T', ' ').replace('Z', '')}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')} +0000 UTC m=+${process.uptime().toFixed(9)}`,
          fixedUS: fixed.toLocaleString('en-US', { timeZone: 'UTC' }),
          fixedString: fixed.toUTCString().replace('GMT', 'UTC'),
          uptime: process.uptime() + Math.random(),
          elapsedSeconds: Math.random() / 100,
          latency: Math.random() * 10,
          durationNs: 1 + Math.floor(Math.random() * 1e6),
          latency_s: Math.random(),
          count: 3,
        }),
      );
    });
  const record = async (fixed: Date, slug: string): Promise<string> => {
    const server = serve(fixed);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const rec = await startRecording({ target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, out: t.path(`${slug}.har`), label: slug, bbHome: t.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      for (let i = 0; i < 3; i++) {
        await (await fetch(`${rec.url}/clock`)).text();
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await rec.close(1000);
      server.close();
    }
    return rec.out;
  };

  it('compares two runs equal; a fixed date in those forms that changed is a finding', async () => {
    const fixed = new Date('2001-02-03T04:05:06Z');
    const [a, b] = [await record(fixed, 'a'), await record(fixed, 'b')];
    const same = await diffCaptures(a, b, {});
    assert.equal(same.verdict, 'match', show(same));
    const moved = await diffCaptures(a, await record(new Date('2001-02-04T04:05:06Z'), 'c'), {});
    assert.deepEqual(moved.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), ['real changed response.body.fixedString', 'real changed response.body.fixedUS']);
  });

  it('reads both numeric orders of a locale date-time, AM/PM or 24 hours, and only inside the window', () => {
    const w = { from: Date.parse('2026-12-06T00:00:00Z'), to: Date.parse('2026-12-08T00:00:00Z') };
    assert.equal(runtimeDatesInText('at 12/7/2026, 9:33:01\u202fPM and 07/12/2026, 21:33:01', w), 'at <TS> and <TS>');
    assert.equal(runtimeDatesInText('Mon Dec 07 2026 21:33:01 GMT+0000 (Coordinated Universal Time).', w), '<TS>.');
    assert.equal(runtimeDatesInText('[Mon Dec  7 21:33:01 2026] and Mon Dec 07 21:33:01 CET 2026; Mon Dec  7 21:33:01 1999', w), '[<TS>] and <TS>; Mon Dec  7 21:33:01 1999');
    assert.equal(runtimeDatesInText('<TS> +0000 UTC m=+0.000123456', w), '<TS> +0000 UTC m=<MONO>');
    assert.equal(runtimeDatesInText('12/7/2025, 9:33:01 PM; 1/2/3 4:56; 13/13/2026 1:00; 12/7/2026 13:00 PM', w), '12/7/2025, 9:33:01 PM; 1/2/3 4:56; 13/13/2026 1:00; 12/7/2026 13:00 PM');
  });
});
