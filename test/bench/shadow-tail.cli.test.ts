// bench/shadow-tail.ts in its quick configuration: it runs to its end and
// every table has a row per configuration with what it counts: the requests
// it sent (a paced load: about --rate a second), the main thread's
// scavenges seen by the peers' 'gc-start' / 'gc-stop' asks (a bb relay
// collects its young generation many times over 800 requests), and the busy
// stretches of the profiled main threads; `--samples 0` adds a shadow that
// mirrors nothing. Figures are the bench's to read: on
// a busy machine stretches run into each other and fewer requests are sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchArea, benchTableRow } from '../helpers/bench.js';

const CONFIGS = ['capture', 'capture, a second peer', 'shadow', 'shadow, compared at the end', 'shadow, compared at the end, 0 % mirrored'];

const count = (cell: string) => Number(cell.replace(/,/g, ''));

test('shadow-tail --quick --profile --samples 0: latency, GC pauses and busy stretches for capture (twice), shadow, shadow compared at the end, and that mirroring nothing', async () => {
  const { code, out } = await benchArea('shadow-tail', ['--quick', '--profile', '--samples', '0']);
  assert.equal(code, 0, out);
  for (const config of CONFIGS) {
    // Two rounds of 1 s at 400 requests a second (a loaded machine answers fewer in that time).
    const [requests] = benchTableRow(out, 'latency, every request', config);
    assert.ok(count(requests!) >= 200 && count(requests!) <= 820, `${config}: ${requests} requests`);
    const [scavenges] = benchTableRow(out, "the main thread's garbage-collection pauses", config);
    // A peer's young generation may not fill in two short rounds (one that mirrors nothing, on a loaded machine,
    // saw none): each says how many it saw; the live shadow, whose main thread allocates the most, must see some.
    assert.ok(Number.isFinite(Number(scavenges)) && Number(scavenges) >= 0, `${config}: ${scavenges} scavenges / 1k requests`);
    if (config === 'shadow') assert.ok(Number(scavenges) > 0, `${config}: ${scavenges} scavenges / 1k requests`);
    // How many stretches and how long is the machine's to say (on a busy one they run into each other): that there are some, in order.
    const [stretches, median, p99, share, busy] = benchTableRow(out, "the main thread's busy stretches", config);
    assert.ok(Number(stretches) > 0 && Number(busy) > 0, `${config}: ${stretches} stretches, ${busy} ms busy / 1k requests`);
    assert.ok(Number(median) > 0 && Number(median) <= Number(p99), `${config}: median ${median} ms, p99 ${p99} ms`);
    assert.match(share!, /^\d+(\.\d)? %$/, `${config}: share ${share}`);
  }
});
