// bb diff --timing end to end (issue 19, "Done means"): a server of our own,
// recorded through bb's proxy, whose "new" variant delays one route. The
// delayed route is `slower` with a ratio near the delay, the others `~`; two
// runs of the old variant, over 20 seeded repetitions of the whole check
// (record both, interleaved; diff), never give a route over a budget of 1.5.
// test: quiet — it times a real server's routes (test/run.mjs runs it beside one other job at most).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { diffCaptures, renderText, type DiffResult } from '../../diff/index.js';
import { mulberry32 } from '../../core/index.js';
import { Cleanups, atFileEnd } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';

/** Base delays per route, ms; the new variant's /slow waits SLOW_NEW instead. */
const DELAYS: Record<string, number> = { '/a': 5, '/slow': 10, '/fast': 0 };
const SLOW_NEW = 40;

/** A server whose routes wait their delay (×1..1.2, seeded jitter) before answering. */
async function variantServer(cleanups: Cleanups): Promise<{ url: string; set(variant: 'old' | 'new', seed: number): void }> {
  let variant: 'old' | 'new' = 'old';
  let random = mulberry32(1);
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const base = variant === 'new' && path === '/slow' ? SLOW_NEW : DELAYS[path] ?? 0;
    const delay = base * (1 + 0.2 * random());
    if (delay > 0) await sleep(delay);
    const body = JSON.stringify({ path, ok: true });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 100;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => server.close(r)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set(v, seed) {
      variant = v;
      random = mulberry32(seed);
    },
  };
}

/**
 * Records `n` rounds of every route through two fresh proxies at once, one in
 * front of each target, taking turns request by request (A then B, B then A
 * on the next round): drift in the machine's load falls on both sides alike,
 * as bb compare --repeat interleaves its runs. Run one after the other on a
 * machine whose load swung between 10 and 28, an old-vs-old route once read
 * ×2.5 [1.57, 3.59] at n = 8: the load changed, not the server. The HARs' paths.
 */
async function recordPair(cleanups: Cleanups, targetA: string, targetB: string, n: number): Promise<[string, string]> {
  const recs = [await record(cleanups, targetA), await record(cleanups, targetB)];
  for (let k = 0; k < n; k++) {
    for (const path of Object.keys(DELAYS)) {
      for (const rec of k % 2 === 0 ? recs : [...recs].reverse()) {
        const res = await fetch(`http://127.0.0.1:${rec.port}${path}?k=${k}`);
        assert.equal(res.status, 200);
        await res.text();
      }
    }
  }
  const files: string[] = [];
  for (const rec of recs) {
    const har = await rec.finish();
    const file = join(rec.dir, 'run.har');
    await writeFile(file, JSON.stringify(har));
    files.push(file);
  }
  return [files[0]!, files[1]!];
}

const routes = (r: DiffResult) => new Map((r.timing?.routes ?? []).map((x) => [x.route, x]));

describe('bb diff --timing against a server of our own', () => {
  const cleanups = new Cleanups();
  atFileEnd(() => cleanups.run());

  it('finds the delayed route slower by about the delay, the others ~', async () => {
    const oldServer = await variantServer(cleanups);
    const newServer = await variantServer(cleanups);
    oldServer.set('old', 1);
    newServer.set('new', 2);
    const [old, neu] = await recordPair(cleanups, oldServer.url, newServer.url, 20);
    const r = await diffCaptures(old, neu, { timing: { budget: 1.5 } });
    const text = renderText(r, { color: false });
    const slow = routes(r).get('/GET /slow')!;
    assert.equal(slow.verdict, 'slower', text);
    // The new variant waits 30 ms more (×1.1 on average: 33 ms). Timer lag on
    // a busy machine adds to both sides alike, so the ratio expected is
    // (old median + 33) / old median: ×4.1 on an idle machine, ×2.3 at a load of 15.
    assert.ok(slow.delta! > 25 && slow.delta! < 45, `change ${slow.delta} ms\n${text}`);
    const expected = (slow.old.p50! + 33) / slow.old.p50!;
    assert.ok(Math.abs(slow.ratio! / expected - 1) < 0.25, `ratio ${slow.ratio}, expected about ${expected.toFixed(2)}\n${text}`);
    assert.equal(slow.overBudget, true, `interval ${slow.ci} against the budget 1.5\n${text}`);
    assert.equal(routes(r).get('/GET /a')!.verdict, '~', text);
    assert.equal(routes(r).get('/GET /fast')!.verdict, '~', text);
    assert.equal(r.exitCode, 1);
    assert.deepEqual(r.findings.filter((f) => f.class === 'real').map((f) => [f.kind, f.routes]), [['slower', ['GET /slow']]]);
  });

  it('two runs of the old build: no route over a budget of 1.5 in 20 seeded repetitions', async (t) => {
    const a = await variantServer(cleanups);
    const b = await variantServer(cleanups);
    const REPS = 20;
    let overBudget = 0;
    let slower = 0;
    let checked = 0;
    const over: string[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      a.set('old', 100 + 2 * rep);
      b.set('old', 101 + 2 * rep);
      const [first, second] = await recordPair(cleanups, a.url, b.url, 8);
      const r = await diffCaptures(first, second, { timing: { budget: 1.5 } });
      for (const x of r.timing!.routes) {
        checked++;
        if (x.overBudget) overBudget++;
        if (x.verdict === 'slower' || x.verdict === 'faster') slower++;
      }
      if (r.exitCode !== 0) over.push(`repetition ${rep}:\n${renderText(r, { color: false })}`);
    }
    // Every repetition runs before judging, so a failure still says the rate.
    const rate = `old vs old over ${REPS} repetitions × 3 routes: ${overBudget}/${checked} over budget 1.5, ${slower}/${checked} slower or faster at threshold 1.2 (false-positive rate ${(slower / checked * 100).toFixed(1)} %)`;
    t.diagnostic(rate);
    assert.equal(overBudget, 0, `${rate}\n${over.join('\n')}`);
    assert.deepEqual(over, []);
  });
});
