// Scanning a finished journal by bytes: the lines are the ones readline gives
// (what the writer read before), each with the byte range it came from, and
// records read back by their ranges are the records of those lines.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { readLineRanges, scanJournal } from '../../capture/journal-bytes.js';
import { LineRanges } from '../../capture/entry-assembly.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();

async function readlineLines(path: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) lines.push(line);
  return lines;
}

async function scanned(path: string): Promise<Array<{ line: string; at: number; bytes: number }>> {
  const file = await open(path, 'r');
  const lines: Array<{ line: string; at: number; bytes: number }> = [];
  try {
    await scanJournal(file, (line, at, bytes) => void lines.push({ line, at, bytes }));
  } finally {
    await file.close();
  }
  return lines;
}

describe('scanJournal', () => {
  it('cuts lines as readline does, with each line\'s byte range, across reads and multi-byte characters', async () => {
    // Over 1 MiB so lines (and a 3-byte character) straddle reads; CRs as a damaged journal may hold; a torn last line.
    const parts: string[] = [];
    for (let i = 0; i < 30_000; i++) parts.push(JSON.stringify({ r: 'wsm', x: i, s: 'é✓'.repeat(i % 13) }));
    const text = parts.join('\n') + '\nbad\r\nmid\rline\n\r\n\rx\r\n\n{"r":"torn",' ;
    const path = tmp.path('scan.journal');
    writeFileSync(path, text);
    const got = await scanned(path);
    assert.deepEqual(got.map((l) => l.line), await readlineLines(path));
    const bytes = Buffer.from(text);
    for (const l of got) assert.equal(bytes.toString('utf8', l.at, l.at + l.bytes), l.line);
  });

  it('reads records back by their ranges, in order, leaving out lines that do not parse', async () => {
    const lines = [JSON.stringify({ r: 'bb-journal', v: 3 }), JSON.stringify({ r: 'wsm', x: 1, seq: 1 }), 'torn', JSON.stringify({ r: 'wse', x: 1, seq: 2, msg: 'café' })];
    const path = tmp.path('back.journal');
    writeFileSync(path, lines.join('\n') + '\n');
    const all = await scanned(path);
    const ranges = new LineRanges();
    for (const l of all) {
      ranges.at.push(l.at);
      ranges.bytes.push(l.bytes);
    }
    const file = await open(path, 'r');
    try {
      assert.deepEqual(readLineRanges(file.fd, ranges), [JSON.parse(lines[1]!), JSON.parse(lines[3]!)]);
    } finally {
      await file.close();
    }
  });
});
