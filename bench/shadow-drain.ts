// How long the end of a `bb shadow` run takes on a quiet and on a saturated
// machine (docs/shadow.md "Limits": the comparison worker's low priority
// holds at the end too, so close() waits for it on what other work leaves).
// --requests small GETs through startShadow (the built bb, this process), then
// close(); with --spin N, N other processes spin on the cores from the first
// request to the end of the close (each bounded to 120 s, ended by PID).
//
//   node --import tsx bench/shadow-drain.ts [--requests 3000] [--spin 3]
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { positiveFlags } from './lib/args.js';
import { spinners as spin } from './lib/spin.js';
import { startShadow } from '../dist/index.js';

const args = process.argv.slice(2);
const { requests } = positiveFlags(args, { requests: 3_000 }, true);
const spinners = args.includes('--spin') ? positiveFlags(args, { spin: 3 }, true).spin : 0;

/** An upstream answering every GET with a small JSON body (a random id: each answer differs, as a real server's). */
async function upstream(): Promise<http.Server> {
  const server = http.createServer((req, res) => res.end(JSON.stringify({ id: Math.random(), path: req.url })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

const url = (s: http.Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
const work = mkdtempSync(join(os.tmpdir(), 'bb-shadow-drain-'));
const [primary, candidate] = [await upstream(), await upstream()];
const spinning: ChildProcess[] = [];
try {
  const shadow = await startShadow({ primary: url(primary), candidate: url(candidate), outDir: join(work, 'out'), bbHome: join(work, 'home') });
  spinning.push(...spin(spinners, 120));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const get = (i: number): Promise<void> =>
    new Promise((resolve, reject) => http.get(`${shadow.url}/item/${i}`, { agent }, (res) => (res.resume(), res.on('end', resolve))).on('error', reject));
  const t0 = performance.now();
  for (let i = 0; i < requests; i += 8) await Promise.all(Array.from({ length: Math.min(8, requests - i) }, (_, k) => get(i + k)));
  const t1 = performance.now();
  const report = await shadow.close();
  const t2 = performance.now();
  agent.destroy();
  const t = report.totals;
  const compared = t.equal + t.regressions + t.noise + t.unclassified;
  console.log(`${spinners} spinning process(es), load ${os.loadavg()[0]!.toFixed(1)}: ${requests} requests in ${((t1 - t0) / 1000).toFixed(1)} s; close ${((t2 - t1) / 1000).toFixed(1)} s; ${compared} of ${t.mirrored} mirrored compared, the final report by the ${shadow.drainedBy()} worker`);
} finally {
  for (const s of spinning) s.kill();
  primary.close();
  candidate.close();
  rmSync(work, { recursive: true, force: true });
}
