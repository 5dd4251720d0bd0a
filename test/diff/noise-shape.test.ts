// The shapes varying values share and the globs of generated ids (issue 33 item 5).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { entryGlob, hasShape, looksGenerated, pathGlob, varyingShape } from '../../diff/noise-shape.js';

describe('varyingShape', () => {
  it('keeps what two values share and names what varies by alphabet and length', () => {
    assert.deepEqual(varyingShape('sess-a3f9c2e1b4d7', 'sess-09be77c1d2aa'), { regex: '^sess-[0-9a-f]{12}$', replace: 'sess-<HEX12>' });
    assert.deepEqual(varyingShape(1796416406123, 1796416499999), { regex: '^[0-9]+$', replace: '<NUM>' });
    assert.deepEqual(varyingShape('/posts/x81', '/posts/x93'), { regex: '^/posts/x[0-9]+$', replace: '/posts/x<NUM>' });
    assert.deepEqual(varyingShape('337d23h21m', '337d2h8m'), { regex: '^[0-9]+d[0-9]+h[0-9]+m$', replace: '<NUM>d<NUM>h<NUM>m' });
    // Two random hex values whose one letter fell at one place are hex, not numbers around that letter (a test's
    // nonce of 8 hex digits was then not noise against a third run's).
    assert.deepEqual(varyingShape('519879a8', '006087a0'), { regex: '^[0-9a-f]{8}$', replace: '<HEX8>' });
    // A cookie's lifetime (normalize/cookies.ts) is one part, whatever units it has.
    const life = varyingShape('<TS+337d23h21m>', '<TS+338d10m>')!;
    assert.deepEqual(life.replace, '<LIFETIME>');
    assert.ok(hasShape(life, '<TS+1h>') && hasShape(life, '<TS>') && !hasShape(life, 'Thu, 01 Jan 2026'));
    assert.deepEqual(varyingShape('V1StGXR8_Z5jdHi6B-myT', 'x9kQ2m_LpA-7zR4tY0wE1'), { regex: '^[A-Za-z0-9_-]{21}$', replace: '<TOKEN21>' });
    assert.deepEqual(varyingShape('aZ09bY18cX27', 'Qw3eRt5yUi7o'), { regex: '^[A-Za-z0-9_-]{12}$', replace: '<TOKEN12>' });
    // Ordinal numbers are not what varies.
    assert.equal(varyingShape('<UUID:1>', '<UUID:2>'), undefined);
    // Nothing worth a pattern: other types, structures, prose.
    assert.equal(varyingShape('1', 1), undefined);
    assert.equal(varyingShape({ a: 1 }, { a: 2 }), undefined);
    assert.equal(varyingShape('hello there', 'good bye now'), undefined);
  });

  it('a value of another shape does not have it', () => {
    const s = varyingShape('a3f9c2e1b4d7', '09be77c1d2aa')!;
    assert.ok(hasShape(s, 'ffee11223344'));
    assert.ok(!hasShape(s, 'not-an-id'));
    assert.ok(!hasShape(s, 'a3f9c2e1b4d7e5'));
    assert.ok(!hasShape(s, 'a3f9c2e1b4d'));
    assert.ok(!hasShape(s, { id: 'ffee11223344' }));
  });
});

describe('globs of generated ids', () => {
  it('tells generated pieces from names', () => {
    for (const s of ['a3f9c2e1b4d7', '12345', '<UUID:3>', '<ULID>', 'V1StGXR8_Z5jdHi6B-myT']) assert.ok(looksGenerated(s), s);
    for (const s of ['posts', 'v1', 'items', 'readme', 'index.html', 'ab12']) assert.ok(!looksGenerated(s), s);
    // Words joined by _ or - are a name even with digits; a nanoid's parts are not words.
    for (const s of ['googlelogo_light_color_272x92dp', 'user-avatar-2x', 'report_2024_final']) assert.ok(!looksGenerated(s), s);
    for (const s of ['V1StGXR8_Z5jdHi6B-myT', 'a3f9c2e1-b4d7', 'x9kq2m_lpa7zr4ty0we1']) assert.ok(looksGenerated(s), s);
    // Words before a piece long enough to be an id of its own: an id, as the diff's shapes read it (diff/normalize/shapes.ts).
    for (const s of ['payment_intent_secret_a1b2c3d4e5f6a7b8c9', 'order_item_3f9c2e1b4d7a']) assert.ok(looksGenerated(s), s);
    assert.equal(entryGlob('/GET /pay/payment_intent_secret_a1b2c3d4e5f6a7b8c9#1'), '/GET /pay/*#1');
    assert.equal(entryGlob('/GET /images/branding/googlelogo_light_color_272x92dp.png#1'), '/GET /images/branding/googlelogo_light_color_272x92dp.png#1');
    assert.equal(entryGlob('/GET /images/googlelogo_light_color_272x92dp#1'), '/GET /images/googlelogo_light_color_272x92dp#1');
  });

  it('an entry id keeps its page, method, named segments and occurrence', () => {
    assert.equal(entryGlob('checkout/GET /v1/items/a3f9c2e1b4d7/parts#2'), 'checkout/GET /v1/items/*/parts#2');
    assert.equal(entryGlob('/POST /graphql[CreateItem]#1'), '/POST /graphql[CreateItem]#1');
    assert.equal(entryGlob('/GET /orders/123456[x]#1'), '/GET /orders/*[x]#1');
    assert.equal(entryGlob('/GET /a#1'), '/GET /a#1');
    assert.equal(entryGlob('Home / 20240101x/GET /u/12345#3'), 'Home / 20240101x/GET /u/*#3');
  });

  it('a field path has its generated keys as one-segment wildcards', () => {
    assert.equal(pathGlob('response.body.a3f9c2e1b4d7.user'), 'response.body.*.user');
    assert.equal(pathGlob('response.body["0a1b2c3d4e5f"].items[].id'), 'response.body.*.items[].id');
    assert.equal(pathGlob('response.body.items[].id'), 'response.body.items[].id');
  });
});
