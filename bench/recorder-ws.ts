// The WebSocket tap and the recorder alone, µs per message: the frames of
// 32 echoing connections (each turn, every connection's client sends one
// masked 100-byte text message or its upstream echoes it) fed to the tap as
// the relay feeds it, the facts recorded into a real capture, the journal
// flushed at the end of each turn as in the proxy. No sockets: what bb's
// recording adds to a message without the relay and the machine's other
// load (bench/profiles/README.md "WebSocket", issue 39).
//
//   node --import tsx bench/lib/area.ts recorder-ws [--no-redact] [--tap-only] [--turns N]
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { FactBus } from '../proxy/events.js';
import { tapWebSocket, type WsTap } from '../proxy/ws-tap.js';
import { openCapture } from '../capture/index.js';
import { PassThrough } from 'node:stream';
import { positiveFlags } from './lib/args.js';

const CONNECTIONS = 32;
const SIZE = 100;

// One text frame of SIZE bytes: masked (the client's) or not (the upstream's).
function frame(masked: boolean): Buffer {
  const payload = Buffer.alloc(SIZE, 'm');
  const head = Buffer.from([0x81, (masked ? 0x80 : 0) | SIZE]);
  if (!masked) return Buffer.concat([head, payload]);
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const body = Buffer.from(payload.map((b, i) => b ^ key[i & 3]!));
  return Buffer.concat([head, key, body]);
}

/** Runs the WebSocket recording micro-benchmark. */
export async function run(args: string[]): Promise<void> {
  const { turns } = positiveFlags(args, { turns: 3000 }, true);
  const dir = mkdtempSync(join(os.tmpdir(), 'rec-ws-mb-'));
  const redact = !args.includes('--no-redact');
  const cap = await openCapture({ out: join(dir, 'x.har'), label: 'mb', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: join(dir, 'home'), ...(redact ? {} : { redact: false }) });
  const bus = new FactBus();
  // --tap-only: the tap's parse and facts with nobody recording them (what the recorder adds is the difference).
  if (!args.includes('--tap-only')) bus.on(cap.listener);
  const taps: WsTap[] = [];
  for (let c = 0; c < CONNECTIONS; c++) {
    const exchangeId = c + 1;
    taps.push(tapWebSocket({
      exchangeId, client: new PassThrough(), upstream: new PassThrough(), clientHead: Buffer.alloc(0), upstreamHead: Buffer.alloc(0),
      responseHeaders: ['Upgrade', 'websocket'], emit: (fact) => bus.emit(fact), fed: true,
    }));
  }
  const fromClient = frame(true);
  const fromUpstream = frame(false);
  const now = () => performance.timeOrigin + performance.now();
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  for (let r = 0; r < 4; r++) {
    const cpu = process.cpuUsage();
    for (let t = 0; t < turns; t++) {
      // A socket hands out a fresh buffer per read: so does this (the tap and the recorder keep views of it).
      const chunk = Buffer.from(t % 2 === 0 ? fromClient : fromUpstream);
      for (const tap of taps) {
        if (t % 2 === 0) tap.fromClient(chunk, now());
        else tap.fromUpstream(chunk, now());
      }
      await turn();
    }
    const used = process.cpuUsage(cpu);
    // CPU time (user + system) says more than wall time on a shared machine; the first round warms the JIT.
    const us = (used.user + used.system) / (turns * CONNECTIONS);
    if (r > 0) console.log(`${redact ? 'redact' : 'no-redact'} ${us.toFixed(2)} µs CPU per message`);
  }
  for (const tap of taps) tap.stop();
  cap.discard();
  rmSync(dir, { recursive: true, force: true });
}
