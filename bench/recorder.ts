// The recorder alone, µs per exchange: the facts of small h2-like exchanges
// (100 requests, a flush, their 100 responses, a flush) into a real capture,
// no sockets. What the journal's encoding and writes cost without the relay
// and the machine's other load (bench/profiles/README.md, issue 39).
//
//   node --import tsx bench/lib/area.ts recorder [--no-redact] [--h2-order] [--cookie]
//
// --h2-order: the responses as an h2 upstream (node:http2) sends them, every
// stream's HEADERS frame and then every stream's DATA frame, so each
// exchange's records of the turn come between other exchanges' records.
// --cookie: each request carries a session cookie, so the capture knows a
// secret by value and searches every other header and the target for it
// (capture/redact-values.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { FactBus, type Fact } from '../proxy/events.js';
import { openCapture } from '../capture/index.js';

/** Runs the recorder micro-benchmark. */
export async function run(args: string[]): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'rec-mb-'));
  const redact = !args.includes('--no-redact');
  const h2Order = args.includes('--h2-order');
  const cookie = args.includes('--cookie');
  const cap = await openCapture({ out: join(dir, 'x.har'), label: 'mb', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: join(dir, 'home'), ...(redact ? {} : { redact: false }) });
  const bus = new FactBus();
  bus.on(cap.listener);
  const reqH = [':method', 'GET', ':path', '/small', ':scheme', 'http', ':authority', '127.0.0.1:8080', 'user-agent', 'h2load nghttp2/1.52.0', 'accept', '*/*'];
  if (cookie) reqH.push('cookie', 'sid=Zk3v9QpL2mXw8RtY6nBc4HdJ0aFs7GeU; theme=dark');
  const resH = [':status', '200', 'content-type', 'application/json', 'content-length', '100', 'date', 'Sat, 05 Dec 2026 02:40:00 GMT'];
  const body = Buffer.alloc(100, 97);
  let x = 0;
  const now = () => performance.timeOrigin + performance.now();
  function batch(n: number): void {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const id = ++x;
      ids.push(id);
      bus.emit({ type: 'exchange-started', exchangeId: id, connectionId: 'c1', time: now(), scheme: 'http', method: 'GET', target: '/small', httpVersion: '2.0', rawHeaders: reqH, upstream: 'http://127.0.0.1:1', upgrade: false, stream: id * 2 + 1 } as Fact);
      bus.emit({ type: 'request-ended', exchangeId: id, time: now(), rawTrailers: [] });
    }
    bus.emit({ type: 'flush' });
    const head = (id: number) => bus.emit({ type: 'response-started', exchangeId: id, time: now(), statusCode: 200, statusMessage: '', httpVersion: '2.0', rawHeaders: resH });
    if (h2Order) for (const id of ids) head(id);
    for (const id of ids) {
      if (!h2Order) head(id);
      bus.emit({ type: 'response-body', exchangeId: id, time: now(), chunk: body });
      bus.emit({ type: 'exchange-completed', exchangeId: id, time: now(), rawTrailers: [], batched: true });
    }
    bus.emit({ type: 'flush' });
  }
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    const cpu = process.cpuUsage();
    for (let i = 0; i < 2000; i++) batch(100);
    const used = process.cpuUsage(cpu);
    // CPU time (user + system) says more than wall time on a shared machine.
    const cpuUs = (used.user + used.system) / 200000;
    console.log(`${redact ? 'redact' : 'no-redact'}${h2Order ? ' h2-order' : ''}${cookie ? ' cookie' : ''} ${((performance.now() - t) * 1000 / 200000).toFixed(2)} µs/exchange wall, ${cpuUs.toFixed(2)} µs CPU`);
  }
  cap.discard();
  rmSync(dir, { recursive: true, force: true });
}
