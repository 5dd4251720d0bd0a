// The journal's lines of a turn as bytes: the same bytes (and text) the
// lines joined with newlines and encoded with Buffer.from give, whatever
// the characters and however many lines a turn holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineBuffer } from '../../capture/line-buffer.js';

const odd = 'q"uo\\te é 😀 \u2028 \ud800 end';

test('lines come out as Buffer.from(lines joined, each with its newline) and as that text', () => {
  const lines = ['{"r":"start","x":1}', `{"s":${JSON.stringify(odd)}}`, '', 'ÿ€'];
  const b = new LineBuffer();
  assert.equal(b.empty, true);
  for (const l of lines) b.append(l);
  assert.equal(b.empty, false);
  const text = lines.map((l) => l + '\n').join('');
  assert.deepEqual(b.bytes(), Buffer.from(text, 'utf8'));
  assert.equal(b.text(), Buffer.from(text, 'utf8').toString('utf8'));
  b.clear();
  assert.equal(b.empty, true);
  assert.equal(b.bytes().length, 0);
});

test('a turn larger than the buffer grows it, and the next turn starts empty', () => {
  const b = new LineBuffer();
  const line = 'é'.repeat(40_000); // 80 KB a line in UTF-8
  const lines = Array.from({ length: 30 }, (_, i) => `${i}${line}`);
  for (const l of lines) b.append(l);
  assert.deepEqual(b.bytes(), Buffer.from(lines.join('\n') + '\n', 'utf8'));
  b.clear();
  b.append('x');
  assert.deepEqual(b.bytes(), Buffer.from('x\n'));
});
