// Generated-value shapes (issue 33 item 2): which tokens look generated, the
// shape each gets, and how steady that is for random values — a value that
// draws the "wrong" shape one run in a hundred would be a false finding as
// often. Tables for the pure functions; seeded draws for the steadiness.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { looksGenerated, numericIdShape, shapeOf, shapeSpans, SHAPE_CLASSES } from '../../../diff/normalize/shapes.js';
import { mulberry32 } from '../../../core/index.js';

describe('looksGenerated', () => {
  const generated = [
    'a1b2c3d4e5f6', 'V1StGXR8_Z5jdHi6B-myT', '3kTMd9Zq0XwV1bPs7yLr2A', 'Ab3dE5gH7jK9mN1pQ3sT5vX7', 'dGhpcyBpcyBhIHRlc3Q+/w==',
    'k3j9x2m1q8w7e6r5', 'cjld2cjxh0000qzrmn831i7rn', 'AbCdEfGhIjKlMnOp',
  ];
  const written = [
    // English words, snake_case, SCREAMING_CASE, kebab-case, camelCase
    'internationalization', 'in_stock', 'IN_STOCK', 'order-status-pending', 'getUserNameFromSession', 'ErrInvalidArgument',
    'sha256WithRSAEncryption', 'xmlHttpRequest', 'HTTPServerError500', 'v2CheckoutSessionCompleted', 'iPhone15ProMax',
    // identifiers with digits and separators, model names, file names, versions, dates
    'user_2fa_enabled_v2', 'gpt-4o-mini-2024-07-18', 'claude-3-5-sonnet-20241022', 'quarterly-report-2024', 'node_modules_cache_v3',
    'my-service-v12-prod', '2024-01-15', '20240115103000', '1.22.3-beta.1', 'application/json', 'X-Forwarded-For',
  ];
  for (const s of generated) it(`${s} looks generated`, () => assert.equal(looksGenerated(s), true));
  for (const s of written) it(`${s} does not`, () => assert.equal(looksGenerated(s), false));
});

describe('shapeOf and shapeSpans', () => {
  const table: Array<[string, string[]]> = [
    ['a1b2c3d4e5f6', ['HEX12']],
    ['507f1f77bcf86cd799439011', ['HEX24']],
    ['A1B2C3D4E5F6', ['HEX12']],
    // Digits alone are a number, not hex; a digest of content is not generated.
    ['/orders/938475610293', []],
    ['<binary 44 bytes sha256:0123456789abcdef>', []],
    // A path is not one base64 value, whatever its alphabet.
    ['/v/a1b2c3d4e5f6/x-7', ['HEX12']],
    ['V1StGXR8_Z5jdHi6B-myT', ['NANOID']],
    ['3kTMd9Zq0XwV1bPs7yLr2A', ['B64_22']],
    // A base64 value with + / = is one token; the same length without them is the same shape.
    ['dGhpcyBpcyBhIHRlc3Q+/w==', ['B64_24']],
    ['dGhpcyBpcyBhIHRlc3QxMw==', ['B64_24']],
    ['Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', ['JWT']],
    ['/items/a1b2c3d4e5f6/parts?after=b2c3d4e5f6a1', ['HEX12', 'HEX12']],
    // A word prefix: the run as a whole is one shape (prefix included), steady run to run.
    ['usr_a1b2c3d4e5f6', ['B64_16']],
    ['payment_intent_secret_a1b2c3d4e5f6a7b8c9', ['B64_40']],
    // When the run as a whole reads as words, its generated part still has its shape.
    ['internationalization_service_a1b2c3d4e5f6', ['HEX12']],
    ['order-status-pending-a1b2c3d4e5f6', ['B64_33']],
    // Not ids: words, short hex, a blob past 128 characters, dates, versions.
    ['deadbeefcafe', []],
    ['abc123', []],
    ['IN_STOCK application/json 2024-01-15 v1.22.3', []],
    [`data:${'QUJD'.repeat(40)}`, []],
  ];
  for (const [s, want] of table) it(`${s.slice(0, 60)} → ${want.join(', ') || 'nothing'}`, () => assert.deepEqual(shapeSpans(s).map((x) => x.cls), want));

  it('names every shape it gives in SHAPE_CLASSES', () => {
    for (const [s] of table) for (const { cls } of shapeSpans(s)) assert.ok(SHAPE_CLASSES.includes(cls), cls);
    assert.equal(shapeOf('x'.repeat(200)), undefined);
  });

  it('gives spans that cover the token exactly', () => {
    const s = 'id=a1b2c3d4e5f6&n=V1StGXR8_Z5jdHi6B-myT';
    assert.deepEqual(shapeSpans(s).map((x) => s.slice(x.start, x.end)), ['a1b2c3d4e5f6', 'V1StGXR8_Z5jdHi6B-myT']);
  });
});

describe('random values keep their shape', () => {
  // Per generator: how many of N seeded draws get a shape other than the
  // generator's. Each is a false finding when it happens, so the bound is tight.
  const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const random = mulberry32(33);
  const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
  const N = 20_000;
  const cases: Array<[string, () => string, string, number]> = [
    // One in 300 has no letter: digits alone, not a hex shape (see isHex).
    ['12 hex', () => pick('0123456789abcdef', 12), 'HEX12', 1 / 200],
    ['24 hex (ObjectId)', () => pick('0123456789abcdef', 24), 'HEX24', 1 / 5000],
    ['nanoid', () => pick(`${B62}_-`, 21), 'NANOID', 1 / 500],
    ['base62 16', () => pick(B62, 16), 'B64_16', 1 / 200],
    ['base62 22', () => pick(B62, 22), 'B64_22', 1 / 500],
    ['base62 32', () => pick(B62, 32), 'B64_32', 1 / 2000],
    ['base64url of 32 bytes', () => bytes(32).toString('base64url'), 'B64_43', 1 / 2000],
    ['base64 of 16 bytes', () => bytes(16).toString('base64'), 'B64_24', 1 / 500],
  ];
  for (const [name, draw, want, rate] of cases) {
    it(`${name} → ${want} in all but ${rate * N} of ${N}`, () => {
      let off = 0;
      for (let i = 0; i < N; i++) {
        const v = draw();
        const spans = shapeSpans(v);
        if (!(spans.length === 1 && spans[0]!.cls === want && spans[0]!.end - spans[0]!.start === v.length)) off++;
      }
      assert.ok(off <= rate * N, `${off} of ${N}`);
    });
  }
});

describe('numericIdShape', () => {
  const table: Array<[string, unknown, string | undefined]> = [
    ['id', 48213, 'INT'], ['orderId', 10234, 'INT'], ['order_id', '48213', 'DIGITS'], ['userID', 1000, 'INT'], ['x-id', 99999, 'INT'],
    // Not ids: small numbers, counts, prices, ports, keys that only end in "id"
    ['id', 999, undefined], ['id', 12.5, undefined], ['id', -4821, undefined], ['count', 48213, undefined], ['price', 129900, undefined],
    ['port', 8080, undefined], ['paid', 48213, undefined], ['PAID', 48213, undefined], ['valid', '1234', undefined], ['id', 'a1234', undefined],
  ];
  for (const [key, value, want] of table) it(`${key}: ${JSON.stringify(value)} → ${want ?? 'as it is'}`, () => assert.equal(numericIdShape(key, value), want));
});
