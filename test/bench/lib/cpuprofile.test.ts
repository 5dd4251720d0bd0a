// bench/lib/cpuprofile.ts busyStretches on a profile written by hand: the
// lengths of the runs of samples between idle moments (short idle gaps
// joined), and the time of each area over every stretch and over the long
// ones. The shadow tail bench reads a relay's queue from these.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { busyStretches } from '../../../bench/lib/cpuprofile.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();

/** A profile whose samples (node ids) each stand for `deltas` µs since the one before. */
function profileFile(samples: number[], deltas: number[]): string {
  const frame = (id: number, functionName: string, url = '', children: number[] = []) => ({ id, callFrame: { functionName, url, lineNumber: 0, columnNumber: 0, scriptId: '0' }, children });
  const nodes = [
    frame(1, '(root)', '', [2, 3, 4, 5]),
    frame(2, '(idle)'),
    frame(3, 'flushNow', 'file:///repo/dist/capture/journal.js', [6]),
    frame(4, 'feed', 'file:///repo/dist/proxy/http1/parser.js'),
    frame(5, '(garbage collector)'),
    // A native write under the journal's flush: the journal's.
    frame(6, 'writeBuffer', ''),
  ];
  const path = tmp.path(`${samples.join('-')}.cpuprofile`);
  writeFileSync(path, JSON.stringify({ nodes, startTime: 0, endTime: deltas.reduce((a, b) => a + b, 0), samples, timeDeltas: deltas }));
  return path;
}

/** A map's values to the microsecond (sums of ms fractions carry float dust). */
const us = (m: Map<string, number>) => Object.fromEntries([...m].map(([k, v]) => [k, Math.round(v * 1000)]));

const areaOf = (file: string) => (/dist\/capture\//.test(file) ? 'journal' : /dist\/proxy\//.test(file) ? 'parsing' : undefined);

test('busyStretches: runs of busy samples, idle gaps under the join joined, areas over all and over the long ones', () => {
  // Samples every 100 µs: busy 300 µs (parser, journal, native write), idle 100 µs (joined: under 200 µs),
  // busy 200 µs (GC, parser), idle 500 µs (a gap: a new stretch), busy 100 µs (journal), idle.
  const samples = [4, 3, 6, 2, 5, 4, 2, 2, 2, 2, 2, 3, 2];
  const deltas = samples.map(() => 100);
  const s = busyStretches(profileFile(samples, deltas), areaOf, { repoRoot: '/repo/', longMs: 0.5, joinMs: 0.2 });
  // First stretch: from 0 (its first sample stands for the 100 µs before it) to 600 µs; the second 1,100 to 1,200.
  assert.deepEqual(s.lengths, [0.6, 0.1]);
  assert.deepEqual(us(s.all), { parsing: 200, journal: 300, GC: 100 });
  // Only the first is at least 0.5 ms long.
  assert.deepEqual(us(s.long), { parsing: 200, journal: 200, GC: 100 });
});

test('busyStretches: with no join, every idle sample ends a stretch', () => {
  const samples = [4, 2, 4, 2, 4];
  const s = busyStretches(profileFile(samples, samples.map(() => 100)), areaOf, { repoRoot: '/repo/', joinMs: 0.05 });
  assert.deepEqual(s.lengths, [0.1, 0.1, 0.1]);
  assert.equal(s.long.size, 0);
});

test('busyStretches: a stretch that ran the dropped area is left out whole', () => {
  // Three stretches: parsing; the journal with its write; parsing. The journal's is the harness's here.
  const samples = [4, 2, 2, 2, 3, 6, 2, 2, 2, 4, 4];
  const s = busyStretches(profileFile(samples, samples.map(() => 100)), areaOf, { repoRoot: '/repo/', drop: 'journal' });
  assert.deepEqual(s.lengths, [0.1, 0.2]);
  assert.equal(s.dropped, 1);
  assert.deepEqual(us(s.all), { parsing: 300 });
});
