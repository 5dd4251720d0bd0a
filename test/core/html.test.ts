// The escaping every bb page shares (core/html.ts): text and attributes, and
// JSON inside a <script> element that no value can close.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { esc, scriptJson } from '../../core/html.js';

describe('HTML escaping', () => {
  it('escapes the five characters that matter in text and attributes; script JSON cannot close its element and reads back the same', () => {
    assert.equal(esc(`<a href="x">'&`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
    assert.equal(scriptJson({ s: '</script>\u2028&' }), '{"s":"\\u003c/script\\u003e\\u2028\\u0026"}');
    assert.deepEqual(JSON.parse(scriptJson({ s: '</script>\u2028&' })), { s: '</script>\u2028&' });
  });
});
