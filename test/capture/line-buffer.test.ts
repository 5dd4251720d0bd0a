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

test('a line written piece by piece is the bytes of its text: numbers as a template literal prints them', () => {
  const numbers = [0, -0, 7, 10, 99, 100, 12345, 4294967295, 4294967296, 2 ** 53 - 1, 1764625000123.4567, 0.1, -3, -2.5, 1e21, 1.5e-7, Number.NaN, Infinity];
  const b = new LineBuffer();
  const piece = Buffer.from('{"a":', 'latin1');
  let expected = '';
  for (const n of numbers) {
    b.ascii(piece);
    b.num(n);
    b.utf8(`,${JSON.stringify(odd)}`);
    b.newline();
    expected += `{"a":${n},${JSON.stringify(odd)}\n`;
  }
  assert.deepEqual(b.bytes(), Buffer.from(expected, 'utf8'));
});

test('pieces grow the buffer as whole lines do', () => {
  const b = new LineBuffer();
  const piece = Buffer.from('x'.repeat(1000), 'latin1');
  let expected = '';
  for (let i = 0; i < 200; i++) {
    b.ascii(piece);
    b.num(i * 1_000_003.25);
    b.utf8('é'.repeat(300));
    b.newline();
    expected += `${'x'.repeat(1000)}${i * 1_000_003.25}${'é'.repeat(300)}\n`;
  }
  assert.deepEqual(b.bytes(), Buffer.from(expected, 'utf8'));
});
