// visibleText (core/visible.ts): captured text's controls and bidi characters written as their escapes, so that
// text from the traffic reads as it was sent and cannot reorder or hide bb's own words around it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { visibleText } from '../../core/visible.js';

describe('visibleText', () => {
  for (const [text, shown] of [
    ['GET /x/\u202E?q=\u202Espoof', 'GET /x/\\u202E?q=\\u202Espoof'],
    ['\u2066isolate\u2069 \u202Aembed\u202C \u200E\u200F\u061C', '\\u2066isolate\\u2069 \\u202Aembed\\u202C \\u200E\\u200F\\u061C'],
    ['bell\u0007 esc\u001b[2J tab\t nl\n del\u007f c1\u0085\u009b', 'bell\\u0007 esc\\u001B[2J tab\\u0009 nl\\u000A del\\u007F c1\\u0085\\u009B'],
    ['ünïcødé 😀 שלום مرحبا', 'ünïcødé 😀 שלום مرحبا'],
    ['', ''],
  ] as const) {
    it(`writes ${JSON.stringify(text)} as ${JSON.stringify(shown)}`, () => assert.equal(visibleText(text), shown));
  }

  it('leaves no character of the bidi and control classes in any text', () => {
    let all = '';
    for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
    assert.doesNotMatch(visibleText(all), /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  });
});
