// Generated-value shapes (issue 33 item 2): which tokens look generated, the
// shape each gets, and how steady that is for random values — a value that
// draws the "wrong" shape one run in a hundred would be a false finding as
// often. Tables for the pure functions; seeded draws for the steadiness.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { idKeyTokenShape, looksGenerated, numericIdShape, shapeOf, shapeSpans, SHAPE_CLASSES } from '../../../diff/normalize/shapes.js';
import { mulberry32 } from '../../../core/index.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { renderText, type DiffResult } from '../../../diff/index.js';
import type { Har } from '../../../capture/har.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffAgreeing } from '../diff-bounded.js';
import { capture } from '../../helpers/har.js';

describe('looksGenerated', () => {
  const generated = [
    'a1b2c3d4e5f6', 'V1StGXR8_Z5jdHi6B-myT', '3kTMd9Zq0XwV1bPs7yLr2A', 'Ab3dE5gH7jK9mN1pQ3sT5vX7', 'dGhpcyBpcyBhIHRlc3Q+/w==',
    'k3j9x2m1q8w7e6r5', 'cjld2cjxh0000qzrmn831i7rn', 'AbCdEfGhIjKlMnOp',
    // one run of one-case letters that read as random: a lower-case alphabet's id, base32 that drew no digit
    'kqzvmxabpdjwhftoqzrx', 'ooekdijbnbbjdfjocaiflnjgoohnblgf', 'MJQBDXRFZKQWPTXVLNSC',
  ];
  const written = [
    // English words, snake_case, SCREAMING_CASE, kebab-case, camelCase
    'internationalization', 'in_stock', 'IN_STOCK', 'order-status-pending', 'getUserNameFromSession', 'ErrInvalidArgument',
    'sha256WithRSAEncryption', 'xmlHttpRequest', 'HTTPServerError500', 'v2CheckoutSessionCompleted', 'iPhone15ProMax',
    // identifiers with digits and separators, model names, file names, versions, dates
    'user_2fa_enabled_v2', 'gpt-4o-mini-2024-07-18', 'claude-3-5-sonnet-20241022', 'quarterly-report-2024', 'node_modules_cache_v3',
    'my-service-v12-prod', 'googlelogo_light_color_272x92dp', 'hero_banner_1920x1080_v2', '2024-01-15', '20240115103000', '1.22.3-beta.1', 'application/json', 'X-Forwarded-For',
    // long one-case words and names: one run or joined by separators
    'authenticationrequired', 'internationalisation', 'max-http-header-size', 'https-proxy-agent', 'per_rpc_retry_buffer_size', 'SNYK-JS-MINIMIST-',
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
    ['/api/users/Xk9fQ2aB7cD8eF1gH2', ['B64_18']],
    ['/v2/orders/Xk9fQ2aB7cD8eF1gH2', ['B64_18']],
    ['/4711/items/Xk9fQ2aB7cD8eF1gH2', ['B64_18']],
    // A base64 value may start with its `/`, and show another.
    ['/x6vGAN/Xk9fQ2aB7cD8eF1g', ['B64_24']],
    ['/ZyUnIgF3CLOF0xEPBjJshrs', ['B64_24']],
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
    // A file's name is words with short pieces between them, not a base64 id: a change of it is a change.
    ['/images/branding/googlelogo_light_color_272x92dp.png', []],
    ['abc123', []],
    ['IN_STOCK application/json 2024-01-15 v1.22.3', []],
    [`data:${'QUJD'.repeat(40)}`, []],
  ];
  for (const [s, want] of table) it(`${s.slice(0, 60)} → ${want.join(', ') || 'nothing'}`, () => assert.deepEqual(shapeSpans(s).map((x) => x.cls), want));

  it('reads a run millions of characters long as data, and a JWT with a long part as a JWT (a long run used to overflow the regex stack)', () => {
    assert.deepEqual(shapeSpans(`{"hex":"${'0f'.repeat(4_500_000)}"}`), []);
    assert.deepEqual(shapeSpans(`x eyJ${'b'.repeat(6_000_000)}.eyJzdWIiOiJhbm4ifQ.c2ln y`).map((x) => x.cls), ['JWT']);
  });
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
    // Unpadded, shown by its `+` or `/` alone: one in 64 starts with its `/` and a third of those show another
    // (`/x6vGAN/…`); only a first part that reads as a path's word (`/api/…`) is a path's.
    ['base64 of 18 bytes', () => bytes(18).toString('base64'), 'B64_24', 1 / 1000],
    ['base64 of 33 bytes', () => bytes(33).toString('base64'), 'B64_44', 1 / 1000],
    // One-case letters alone (lettersReadRandom): about one in 1,000 reads as words at 16, one in 4,000 at 21.
    ['16 lower-case letters', () => pick('abcdefghijklmnopqrstuvwxyz', 16), 'B64_16', 1 / 300],
    ['21 lower-case letters (a custom nanoid alphabet)', () => pick('abcdefghijklmnopqrstuvwxyz', 21), 'NANOID', 1 / 1000],
    ['26 base32 (RFC 4648, lower case)', () => pick('abcdefghijklmnopqrstuvwxyz234567', 26), 'B64_26', 1 / 1000],
  ];
  // Inside a longer text (a Content-Security-Policy nonce, a Digest nonce): the value whole, its prefix left as it is,
  // when a '+' or its padding shows it is base64 (base64 of 16 or 32 bytes is always padded).
  const within: Array<[string, (b64: string) => string, number]> = [
    ['a CSP nonce', (b64) => `script-src 'self' 'nonce-${b64}' 'strict-dynamic'`, 16],
    ['a Digest nonce', (b64) => `Digest realm="api", qop="auth", nonce="${b64}", opaque="5ccc"`, 32],
    ['a cookie', (b64) => `sid=${b64}; Path=/; HttpOnly`, 16],
  ];
  // Their own draws: the cases below are bounded on the seeded sequence they were measured on.
  const nonces = mulberry32(34);
  const nonce = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(nonces() * 256))).toString('base64');
  for (const [name, text, size] of within) {
    it(`base64 of ${size} bytes in ${name} → B64_${Math.ceil(size / 3) * 4} in all but 1 of 500, whatever '+' and '/' it holds`, () => {
      let off = 0;
      for (let i = 0; i < 2_000; i++) {
        const b64 = nonce(size);
        const s = text(b64);
        const spans = shapeSpans(s);
        const at = s.indexOf(b64);
        if (!(spans.length === 1 && spans[0]!.cls === `B64_${b64.length}` && spans[0]!.start === at && spans[0]!.end === at + b64.length)) off++;
      }
      assert.ok(off <= 2_000 / 500, `${off} of 2000`);
    });
  }
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

// id-key-tokens: under a key that says id, a token generated-ids could not tell (too short for it, or a random
// token whose letters happened to read as words) is an id by its shape; names and words stay as they are.
describe('idKeyTokenShape', () => {
  const table: Array<[string, string, string | undefined]> = [
    ['orderId', 'Xk9fLq2mZp', 'B64_10'], ['id', 'a7Bq2Lx9', 'B64_8'], ['session_id', 'Zq8-vN2_kP4wR7t', 'B64_15'],
    // Random 16-character tokens the word test reads as words (drawn, see looksGenerated): their shape.
    ['refId', 'pCCHWNJabgxpIzeh', 'B64_16'], ['id', 'tehdEckORM8nis2V', 'B64_16'],
    // Not ids: under another key, shorter than 8, words, names, one case without digits, other characters.
    ['ref', 'Xk9fLq2mZp', undefined], ['paid', 'Xk9fLq2mZp', undefined], ['id', 'user01', undefined], ['userId', 'johnSmith', undefined],
    ['typeId', 'IN_STOCK_ITEM', undefined], ['categoryId', 'homegarden', undefined], ['id', 'a7Bq 2Lx9', undefined], ['id', 'v1.4.2-beta', undefined],
  ];
  for (const [key, value, want] of table) it(`${key}: ${JSON.stringify(value)} → ${want ?? 'as it is'}`, () => assert.equal(idKeyTokenShape(key, value), want));

  it('marks every random 10-character base62 id under an id key but a few, and random ones of 16 whatever their letters read as', () => {
    const random = mulberry32(7);
    const draw = (n: number) => Array.from({ length: n }, () => B62[Math.floor(random() * B62.length)]).join('');
    let short = 0;
    let long = 0;
    for (let i = 0; i < 20_000; i++) {
      if (idKeyTokenShape('orderId', draw(10)) === 'B64_10') short++;
      if (idKeyTokenShape('orderId', draw(16)) === 'B64_16') long++;
    }
    assert.ok(short >= 19_000, `${short} of 20000 10-character ids`);
    assert.equal(long, 20_000);
  });
});

// Issue 33 item 2 end to end: a REST app of our own, recorded twice through
// bb's proxy, issues ids nobody reuses (12 hex, nanoid, base62, a numeric
// order id) in create responses and an X-Request-Id header. Two runs of one
// build compare MATCH with no config (generated-ids, numeric-ids); a build
// that issues uuids where it issued 12-hex ids is one real finding; with the
// rules switched off by name the ids differ again. Both stores agree. (Keys
// such as `token` are redacted at capture and compared as <REDACTED:n>.)
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The app: every create answers a fresh id of its kind; `uuids` is the new build that issues uuids for items. */
async function restApp(cleanups: Cleanups, seed: number, opts: { uuids?: boolean } = {}): Promise<string> {
  const random = mulberry32(seed);
  const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      let body: unknown;
      if (path === '/items') body = { id: opts.uuids ? randomUUID() : pick('0123456789abcdef', 12), name: 'lamp', price: 1299 };
      else if (path === '/users') body = { id: pick(`${B62}_-`, 21), name: 'ada', state: 'IN_STOCK' };
      else if (path === '/tokens') body = { publicId: pick(B62, 22), kind: 'apiKey', scope: 'read_write' };
      else if (path === '/orders') body = { orderId: 10_000 + Math.floor(random() * 90_000), count: 3, total: 3897 };
      else body = { ok: true, version: '1.4.2' };
      const text = JSON.stringify(body);
      res.writeHead(req.method === 'POST' ? 201 : 200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'X-Request-Id': pick('0123456789abcdef', 32),
      });
      res.end(text);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function send(port: number, method: string, path: string, body?: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      res.resume();
      res.on('end', resolve);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** One session against the app, recorded through bb: the HAR. */
async function recordRun(seed: number, opts: { uuids?: boolean } = {}): Promise<Har> {
  const cleanups = new Cleanups();
  try {
    const rec = await record(cleanups, await restApp(cleanups, seed, opts));
    for (const path of ['/items', '/items', '/users', '/tokens', '/orders', '/orders']) await send(rec.port, 'POST', path, { name: 'x' });
    await send(rec.port, 'GET', '/health');
    return await rec.finish();
  } finally {
    await cleanups.run();
  }
}

describe('generated ids nobody reuses, recorded twice through bb', () => {
  const t = tempDir();
  const show = (r: DiffResult) => renderText(r, { color: false });
  const real = (r: DiffResult) => r.findings.filter((f) => f.class === 'real').map((f) => `${f.kind} ${f.pattern}`);
  let first: Har;
  let second: Har;

  it('matches two runs of one build with no config', async () => {
    first = await recordRun(1);
    second = await recordRun(2);
    const r = await diffAgreeing(t, first, second);
    assert.equal(r.verdict, 'match', show(r));
    assert.equal(r.counts.real, 0, show(r));
  });

  it('reports a build that issues uuids where it issued 12-hex ids as one real finding', async () => {
    const r = await diffAgreeing(t, first, await recordRun(3, { uuids: true }));
    assert.deepEqual(real(r), ['changed response.body.id'], show(r));
    assert.equal(r.findings[0]!.entries, 2, show(r));
    assert.deepEqual(r.differences.map((d) => `${d.old} → ${d.new}`), ['<HEX12:1> → <UUID:1>', '<HEX12:2> → <UUID:2>']);
  });

  it('compares the ids as they are with generated-ids, numeric-ids and id-key-tokens switched off by name', async () => {
    const r = await diffAgreeing(t, first, second, { normalize: { disable: ['generated-ids', 'numeric-ids', 'id-key-tokens'] } });
    assert.deepEqual(real(r).sort(), ['changed response.body.id', 'changed response.body.id', 'changed response.body.orderId', 'changed response.body.publicId'], show(r));
  });
});

// Ids of a one-case alphabet nobody reuses (a lower-case nanoid's 21 letters, an invite code): generated values like
// any other, so two runs compare MATCH (before, each was a real `changed` in every entry); a long word beside them
// that changed is still one finding.
describe('random ids of one-case letters, recorded twice', () => {
  const t = tempDir();
  const random = mulberry32(71);
  const letters = (n: number) => Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyz'[Math.floor(random() * 26)]).join('');
  const run = (label = 'internationalization') => capture(Array.from({ length: 6 }, (_, i) => ({ url: `http://127.0.0.1:4000/invites?n=${i}`, body: { invite: letters(21), coupon: letters(16).toUpperCase(), label } })));

  it('two runs of one build: MATCH with no config; a changed word beside the ids is the one finding', async () => {
    const r = await diffAgreeing(t, run(), run());
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    const changed = await diffAgreeing(t, run(), run('internationalisation'));
    assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern} ${f.entries}`), ['real changed response.body.label 6'], renderText(changed, { color: false }));
  });
});

// Short random ids under id keys, end to end (both stores): two runs of one app compare MATCH, a 10-character id
// whose letters happened to read as words on one side compares by the other side's shape, a real change beside
// them is still one finding, and the rule switched off by name shows the ids again.
describe('short random ids under id keys', () => {
  const t = tempDir();
  const orders = (ids: string[], status = 'paid') => capture(ids.map((orderId, i) => ({ url: `http://127.0.0.1:4000/orders?n=${i}`, body: { orderId, status, total: 3897 } })));
  // 'ted6Itaulu' reads as words: id-key-tokens leaves it as it is (shapes.ts), where the other run drew an id.
  const first = orders(['Xk9fLq2mZp', 'a7Bq2Lx9Qw', 'Tr4sQw8nBv']);
  const second = orders(['Vb2nM8kLq1', 'ted6Itaulu', 'Pz3xC7vR0s']);

  it('two runs of one build: MATCH with no config', async () => {
    const r = await diffAgreeing(t, first, second);
    assert.equal(r.verdict, 'match', renderText(r, { color: false }));
  });

  it('a real change beside the ids is one finding; the ids are still equal', async () => {
    const r = await diffAgreeing(t, first, orders(['Vb2nM8kLq1', 'ted6Itaulu', 'Pz3xC7vR0s'], 'PAID'));
    assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern} ${f.entries}`), ['real changed response.body.status 3'], renderText(r, { color: false }));
  });

  it('with id-key-tokens switched off by name, the ids differ', async () => {
    const r = await diffAgreeing(t, first, second, { normalize: { disable: ['id-key-tokens'] } });
    assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern} ${f.entries}`), ['real changed response.body.orderId 3']);
  });
});

// The id formats services issue, drawn afresh for each of two runs of one build, at keys that do not say id
// (and at ones that do, for the formats only id keys tell apart): bb diff with no config is MATCH, on both
// paths. A format a future change of the shape tables stops recognizing fails here by name.
describe('common id formats, two runs of one build', () => {
  const t = tempDir();
  const rnd = mulberry32(2026);
  const pickFrom = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  const hex = (n: number) => pickFrom('0123456789abcdef', n);
  const b64 = (bytes: number, url: boolean) => Buffer.from(Array.from({ length: bytes }, () => Math.floor(rnd() * 256))).toString(url ? 'base64url' : 'base64');
  const anyKey: Record<string, () => string> = {
    'uuid v4': () => randomUUID(),
    ulid: () => `01${pickFrom('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)}`,
    nanoid: () => pickFrom(`${B62}_-`, 21),
    'MongoDB ObjectId': () => hex(24),
    'sha-1 hex': () => hex(40),
    'base64url, 16 bytes': () => b64(16, true),
    'base64, 16 bytes': () => b64(16, false),
    KSUID: () => pickFrom(B62, 27),
    'Stripe-style (cus_ + 24)': () => `cus_${pickFrom(B62, 24)}`,
    JWT: () => [b64(12, true), b64(30, true), b64(32, true)].join('.'),
  };
  const idKeyOnly: Record<string, () => string> = {
    'base62, 10': () => pickFrom(B62, 10),
    'base62, 16': () => pickFrom(B62, 16),
    'hex, 10': () => hex(10),
  };
  const run = (formats: Record<string, () => string>, key: string) =>
    capture(Object.entries(formats).flatMap(([name, draw]) => [0, 1, 2].map((i) => ({ url: `http://127.0.0.1:1/${encodeURIComponent(name)}/${i}`, body: { [key]: draw(), nested: [{ [key]: draw() }] } }))));

  for (const key of ['ref', 'externalId', 'token_value']) {
    it(`at \`${key}\`: ${Object.keys(anyKey).join(', ')}`, async () => {
      const r = await diffAgreeing(t, run(anyKey, key), run(anyKey, key));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    });
  }
  it(`at id keys only: ${Object.keys(idKeyOnly).join(', ')}`, async () => {
    for (const key of ['id', 'orderId', 'order_id']) {
      const r = await diffAgreeing(t, run(idKeyOnly, key), run(idKeyOnly, key));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    }
  });
});

describe('a Content-Security-Policy nonce, two runs of one build', () => {
  const t = tempDir();
  const page = (policy: (nonce: string) => string) => {
    const nonce = randomBytes(16).toString('base64');
    return capture([{ url: 'http://127.0.0.1:1/page', mime: 'text/html', body: `<html><script nonce="${nonce}">go()</script></html>`, responseHeaders: [['Content-Security-Policy', policy(nonce)]] }]);
  };
  const strict = (nonce: string) => `script-src 'nonce-${nonce}' 'strict-dynamic'; object-src 'none'`;

  it('match with no config, whatever "+" and "/" each nonce holds; a changed directive beside it is the one finding', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await diffAgreeing(t, page(strict), page(strict));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    }
    const loose = await diffAgreeing(t, page(strict), page((n) => `script-src 'nonce-${n}' 'unsafe-inline'; object-src 'none'`));
    assert.deepEqual(loose.differences.map((d) => [d.path, d.old, d.new]), [
      ['response.headers.content-security-policy', "script-src 'nonce-<B64_24:1>' 'strict-dynamic'; object-src 'none'", "script-src 'nonce-<B64_24:1>' 'unsafe-inline'; object-src 'none'"],
    ]);
  });
});
