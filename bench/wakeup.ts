// How a busy thread elsewhere on the machine slows a chain of wake-ups (issue
// 37: why the comparison worker's CPU shows in the relay's tail at any
// priority, docs/performance.md "shadow"). --pairs pairs of processes play
// ping-pong over loopback TCP (one byte each way, 20,000 times, 0.2 ms apart
// or the timer's next tick), as a request crosses the relay, the upstream
// and back; meanwhile one process spins at the given priority (none, nice 0,
// nice 19, or SCHED_IDLE through util-linux's chrt). Prints each pair's
// round-trip percentiles in µs.
//
//   node --import tsx bench/wakeup.ts [--pairs 2] [--spinner none|nice0|nice19|idle] [--trips 20000]
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { positiveFlags } from './lib/args.js';
import { percentile } from './lib/stats.js';
import { spinners } from './lib/spin.js';

const args = process.argv.slice(2);

if (args[0] === 'echo') {
  // The far end of a pair: echoes each byte back.
  const s = connect(Number(args[1]), '127.0.0.1');
  s.setNoDelay(true);
  s.on('data', (d) => s.write(d));
  s.on('error', () => process.exit(0));
  s.on('close', () => process.exit(0));
} else if (args[0] === 'pair') {
  // The near end: times each round trip, prints the percentiles, exits.
  const trips = Number(args[1]);
  const server = createServer((sock: Socket) => {
    sock.setNoDelay(true);
    const rtt: number[] = [];
    let t0 = 0n;
    const send = (): void => {
      t0 = process.hrtime.bigint();
      sock.write('x');
    };
    sock.on('data', () => {
      rtt.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (rtt.length < trips) setTimeout(send, 0.2);
      else {
        rtt.sort((a, b) => a - b);
        const q = (p: number): string => percentile(rtt, p).toFixed(0);
        console.log(`p50 ${q(50)}  p90 ${q(90)}  p99 ${q(99)}  p99.9 ${q(99.9)} µs`);
        sock.destroy();
        server.close();
      }
    });
    send();
  });
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as { port: number }).port;
    spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'echo', String(port)], { stdio: 'inherit' });
  });
} else {
  const { pairs, trips } = positiveFlags(args, { pairs: 2, trips: 20_000 }, true);
  const at = args.indexOf('--spinner');
  const spinner = at >= 0 ? args[at + 1] : 'none';
  const prefix: Record<string, string[]> = { none: [], nice0: [], nice19: ['nice', '-n', '19'], idle: ['chrt', '--idle', '0'] };
  if (!spinner || !(spinner in prefix)) {
    console.error(`bench/wakeup.ts: --spinner takes none, nice0, nice19 or idle, got ${spinner}`);
    process.exit(2);
  }
  // Long enough for the pairs (20,000 round trips take ~25 s here); it ends by itself after that, or when they are done.
  const spin: ChildProcess | undefined = spinner === 'none' ? undefined : spinners(1, 600, prefix[spinner])[0];
  console.log(`${pairs} ping-pong pair(s), ${trips} round trips each, spinner: ${spinner}`);
  const runs = Array.from({ length: pairs }, () => {
    const p = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'pair', String(trips)], { stdio: 'inherit' });
    return new Promise<void>((resolve) => p.on('exit', () => resolve()));
  });
  await Promise.all(runs);
  spin?.kill();
}
