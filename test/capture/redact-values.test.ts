// Secrets remembered by value (capture/redact-values.ts): which values are
// remembered, where a remembered one is found again, the bound on memory, and
// a reader that knows them from `sec` records only agreeing with the
// recorder that journaled them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { MAX_SECRET_VALUE, SecretValues, rememberable, type SecretFields } from '../../capture/redact-values.js';
import { Redactor } from '../../capture/redact.js';

const KEY = Buffer.alloc(32, 5);
const placeholderOf = (v: string) => `<redacted:${createHmac('sha256', KEY).update(v, 'utf8').digest('hex').slice(0, 8)}>`;
const SID = 'Zk3v9QpL2mXw8RtY6nBc4HdJ0aFs7GeU';
const B64 = 'aGVsbG8+d29y/bGQ=';

/** A recorder's memory (its journal records collected) that knows `values`. */
function recorder(values: string[], kept?: number): { mem: SecretValues; journal: SecretFields[] } {
  const journal: SecretFields[] = [];
  const mem = new SecretValues(placeholderOf, (s) => journal.push(s), kept);
  for (const v of values) mem.learn(v, placeholderOf(v));
  return { mem, journal };
}

describe('rememberable', () => {
  const table: Array<[string, boolean, string]> = [
    ['en-US', false, 'shorter than 8'],
    ['true', false, 'shorter than 8'],
    ['undefined', false, 'a plain word'],
    ['12345678', false, 'a plain number'],
    ['PASSWORD', false, 'one kind of letters'],
    ['abcdefg1', true, 'letters and a digit'],
    ['Zk3v9QpL', true, 'eight mixed characters'],
    [SID, true, 'a session id'],
    ['a'.repeat(MAX_SECRET_VALUE - 1) + '1', true, 'as long as remembered values go'],
    ['a'.repeat(MAX_SECRET_VALUE) + '1', false, 'longer'],
  ];
  for (const [value, expected, why] of table) {
    it(`${expected ? 'remembers' : 'does not remember'} ${value.length > 40 ? `${value.length} characters` : `'${value}'`} (${why})`, () => {
      assert.equal(rememberable(value), expected);
    });
  }
});

describe('SecretValues.replaceIn', () => {
  const { mem } = recorder([SID, B64, 'short', 'undefined']);
  const p = placeholderOf(SID);
  const table: Array<[string, string]> = [
    [SID, p],
    [`Bearer ${SID}`, `Bearer ${p}`],
    [`https://x/cb?sid=${SID}&a=1`, `https://x/cb?sid=${p}&a=1`],
    [`/s/${SID}/items`, `/s/${p}/items`],
    [`"${SID}","${SID}"`, `"${p}","${p}"`],
    [`sid=${SID};x`, `sid=${p};x`],
    // Not a token of its own: inside a longer word.
    [`x${SID}`, `x${SID}`],
    [`${SID}x`, `${SID}x`],
    [`${SID}_1`, `${SID}_1`],
    [`${SID}-1`, `${SID}-1`],
    [SID.slice(1), SID.slice(1)],
    // A base64 value: its `+`, `/` and `=` inside, and percent-encoded as a query carries it.
    [`t=${B64}&u=1`, `t=${placeholderOf(B64)}&u=1`],
    [`t=${encodeURIComponent(B64)}&u=1`, `t=${placeholderOf(B64)}&u=1`],
    // Never remembered: too short, or a plain word.
    ['short', 'short'],
    ['mode=undefined', 'mode=undefined'],
    ['', ''],
  ];
  for (const [text, expected] of table) {
    it(`'${text.slice(0, 48)}' → '${expected.slice(0, 48)}'`, () => assert.equal(mem.replaceIn(text), expected));
  }

  it('returns the text itself when nothing is found, and searches nothing while nothing is known', () => {
    const text = 'a long text with no secret in it at all, only words';
    assert.equal(mem.replaceIn(text), text);
    const empty = new SecretValues(() => assert.fail('no hash while nothing is known'));
    assert.equal(empty.any, false);
    assert.equal(empty.replaceIn(SID), SID);
  });
});

describe('a reader that knows values from `sec` records only', () => {
  it('finds them by length and keyed hash, percent-encoded too', () => {
    const { journal } = recorder([SID, B64]);
    assert.deepEqual(journal, [{ p: placeholderOf(SID), n: SID.length }, { p: placeholderOf(B64), n: B64.length, e: encodeURIComponent(B64).length }]);
    assert.ok(journal.every((r) => !JSON.stringify(r).includes(SID) && !JSON.stringify(r).includes(B64)), 'a record holds no value');
    let hashed = 0;
    const reader = new SecretValues((v) => (hashed++, placeholderOf(v)));
    for (const r of journal) reader.know(r);
    assert.equal(reader.replaceIn(`a ${SID} b`), `a ${placeholderOf(SID)} b`);
    assert.equal(reader.replaceIn(`q=${encodeURIComponent(B64)}`), `q=${placeholderOf(B64)}`);
    hashed = 0;
    // Only a token of a known value's length is hashed (none here: words, and runs of them, are shorter).
    reader.replaceIn('plenty of words here, none of them 32 characters long or 17; a-b.c/d=e+f, x_y~z&1');
    assert.equal(hashed, 0);
  });

  it('keeps what the recorder keeps through a churn of values, re-journaled ones included', () => {
    const kept = 8;
    const journal: SecretFields[] = [];
    const rec = new SecretValues(placeholderOf, (s) => journal.push(s), kept);
    const reader = new SecretValues(placeholderOf, undefined, kept);
    const pool = Array.from({ length: 30 }, (_, i) => `value${i}XY`);
    let seed = 7;
    for (let step = 0; step < 600; step++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      // A few values used again and again (a session cookie), the others once in a while.
      const v = pool[seed % 4 === 0 ? seed % 3 : seed % pool.length]!;
      rec.learn(v, placeholderOf(v));
      for (const r of journal.splice(0)) reader.know(r);
      for (const w of pool) assert.equal(reader.match(w), rec.match(w), `step ${step}: ${w}`);
    }
    assert.ok(rec.size <= kept);
    assert.ok(pool.slice(0, 3).every((v) => rec.match(v) !== undefined), 'the values in steady use stay');
  });
});

describe('the bound', () => {
  it('keeps the newest values, the oldest dropped', () => {
    const values = Array.from({ length: 10 }, (_, i) => `secret-${i}-X`);
    const { mem, journal } = recorder(values, 4);
    assert.equal(mem.size, 4);
    assert.equal(journal.length, 10);
    assert.deepEqual(values.map((v) => mem.match(v) !== undefined), [...Array(6).fill(false), ...Array(4).fill(true)]);
  });

  it('a million values cost no more than the bound', () => {
    const mem = new SecretValues(placeholderOf, () => undefined);
    for (let i = 0; i < 1_000_000; i++) mem.learn(`cookie${i}Value`, '<redacted:00000000>');
    assert.equal(mem.size, 4096);
    assert.equal(mem.match('cookie999999Value'), '<redacted:00000000>');
    assert.equal(mem.match('cookie0Value'), undefined);
  });
});

describe('maskBytes', () => {
  it('masks a value at its length where it stands apart in bytes (framing kept); shorter values stay', () => {
    const { mem } = recorder([SID, 'abcdef12']);
    const bytes = Buffer.concat([Buffer.from([0x0a, SID.length]), Buffer.from(SID, 'latin1'), Buffer.from([0x12, 8]), Buffer.from('abcdef12')]);
    const masked = mem.maskBytes(bytes);
    assert.equal(masked.length, bytes.length);
    assert.equal(masked.subarray(2, 2 + SID.length).toString('latin1'), `${placeholderOf(SID).slice(0, -1)}${'~'.repeat(SID.length - 19)}>`);
    assert.equal(masked.subarray(2 + SID.length).toString('latin1'), '\x12\x08abcdef12');
    const plain = Buffer.from('nothing here at all, at all');
    assert.equal(mem.maskBytes(plain), plain);
  });
});

describe('Redactor with values remembered', () => {
  it('remembers what it redacts by name and hides it under any other name; a redactor without it changes nothing', () => {
    const r = new Redactor(KEY);
    r.rememberValues();
    assert.deepEqual(r.head(['Set-Cookie', `sid=${SID}; Path=/`]), ['Set-Cookie', `sid=${placeholderOf(SID)}; Path=/`]);
    assert.deepEqual(r.head(['X-Session', SID, 'Accept-Language', 'en-US']), ['X-Session', placeholderOf(SID), 'Accept-Language', 'en-US']);
    assert.equal(r.url(`/p/${SID}?s=${SID}&lang=en-US`), `/p/${placeholderOf(SID)}?s=${placeholderOf(SID)}&lang=en-US`);
    assert.equal(r.textValue(JSON.stringify({ session: SID, lang: 'en-US' })), JSON.stringify({ session: placeholderOf(SID), lang: 'en-US' }));
    const plain = new Redactor(KEY);
    plain.head(['Set-Cookie', `sid=${SID}; Path=/`]);
    assert.deepEqual(plain.head(['X-Session', SID]), ['X-Session', SID]);
  });

  it('a body bb cannot search is keyed by placeholderOf, never remembered', () => {
    const r = new Redactor(KEY);
    const mem = r.rememberValues();
    assert.equal(r.placeholderOf(SID), placeholderOf(SID));
    assert.equal(mem.size, 0);
  });
});
