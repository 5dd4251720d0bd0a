// The proxy benchmark's verdicts are issue 39's targets (bench/proxy-report.ts targetLines): bb against the
// raw pipe in CPU per request and per message as well as in throughput, and against the tee on 1 MiB bodies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { targetLines, type Sample, type WorkloadResults } from '../../bench/proxy-report.js';

const sample = (rate: number, cpuMsPer1k: number, p50 = 1): Sample => ({ rate, p50, p99: p50, errors: 0, cpuMsPer1k, peakRss: 100 });
const workload = (name: string, configs: Record<string, Sample>): WorkloadResults => ({ workload: name, samples: new Map(Object.entries(configs).map(([k, v]) => [k, [v]])) });

test("verdicts hold bb to issue 39's ratios: CPU per operation and throughput against the pipe, 1 MiB against the tee", () => {
  const lines = targetLines([
    workload('small', { pipe: sample(1000, 10), bb: sample(800, 17) }),
    workload('ws', { pipe: sample(1000, 10), bb: sample(960, 10.5) }),
    workload('1mib', { tee: sample(100, 1000), bb: sample(93, 1200) }),
    workload('sse', { pipe: sample(0, 0, 1), bb: sample(0, 0, 1.1) }),
  ], { longPeakRss: undefined, mitmdump: false });
  const verdict = (what: string) => lines.find((l) => l.includes(what))?.slice(0, 4);
  assert.equal(verdict("small GETs: bb's CPU per request ≤ 1.6× the raw pipe's"), 'MISS', lines.join('\n'));
  assert.equal(verdict('small GETs: bb recording ≥ 0.75× the raw pipe'), 'PASS', lines.join('\n'));
  assert.equal(verdict('WebSocket echo: bb recording ≥ 0.95× the raw pipe'), 'PASS', lines.join('\n'));
  assert.equal(verdict("WebSocket echo: bb's CPU per message ≤ 1.1× the raw pipe's"), 'PASS', lines.join('\n'));
  assert.equal(verdict('1 MiB responses: bb recording ≥ 0.95× the tee forwarder'), 'MISS', lines.join('\n'));
  assert.equal(verdict("SSE time to first event: bb ≤ 1.15× the raw pipe's"), 'PASS', lines.join('\n'));
});
