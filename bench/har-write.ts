// Peak memory of writing a HAR whose capture was closed with many long
// WebSocket conversations still open (how a long `bb shadow` or `bb capture`
// run ends): records a journal of --conversations × --messages through the
// capture's own API (facts on a bus, no sockets: the journal is what a real
// run writes), then writes its HAR in a fresh process per writer, each
// process's peak RSS and time printed with the HAR's sha256. Give a second
// source tree (an older checkout) with --baseline to compare writers on the
// same journal: equal hashes = byte-identical HARs.
//
//   node --import tsx bench/har-write.ts [--conversations 20] [--messages 20000] [--size 64] [--http 0] [--baseline DIR]
//
// --http N adds N small GETs spread over the run (an HTTP-heavy journal: the
// writer's speed per exchange, where nothing is read back).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { Duplex } from 'node:stream';

const here = resolve(new URL('..', import.meta.url).pathname);

/** Child mode: `--write TREE JOURNAL_BASE BBHOME` writes `<base>` from `<base>.journal` with TREE's writer and prints one JSON line. */
async function write(tree: string, base: string, bbHome: string): Promise<void> {
  const { writeHarFromJournal } = (await import(join(tree, 'capture/writer.ts'))) as typeof import('../capture/writer.js');
  const { redactorFor } = (await import(join(tree, 'capture/capture.ts'))) as typeof import('../capture/capture.js');
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const result = await writeHarFromJournal({
    journalPath: `${base}.journal`, bodiesPath: `${base}.bodies`, out: base, complete: false, endedAt: 0,
    redactorFor: (h) => redactorFor(h, bbHome),
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  // maxRSS is in KiB; the HAR is hashed by the parent (reading it here would count in this peak).
  console.log(JSON.stringify({ peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, entries: result.entries, held: (result as { heldAtMost?: number }).heldAtMost }));
}

/** Records the journal: every conversation opened, then messages round-robin over them, none closed. */
async function record(dir: string, bbHome: string, conversations: number, messages: number, size: number, gets: number): Promise<string> {
  const { openCapture } = await import('../capture/index.js');
  const { FactBus } = await import('../proxy/events.js');
  const out = join(dir, 'open.har');
  const capture = await openCapture({ label: 'p', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome, out });
  const bus = new FactBus();
  bus.on(capture.listener);
  const sock = () => new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
  const t = Date.now();
  for (let x = 1; x <= conversations; x++) {
    bus.emit({ type: 'exchange-started', exchangeId: x, connectionId: `c${x}`, time: t, scheme: 'http', method: 'GET', target: `/ws/${x}`, httpVersion: '1.1', rawHeaders: ['Host', 'h:8080', 'Upgrade', 'websocket', 'Connection', 'Upgrade'], upstream: 'http://127.0.0.1:3001', upgrade: true });
    bus.emit({ type: 'request-ended', exchangeId: x, time: t + 1, rawTrailers: [] });
    bus.emit({ type: 'upgrade-opened', exchangeId: x, time: t + 2, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1', rawHeaders: ['Upgrade', 'websocket', 'Connection', 'Upgrade'], client: sock(), upstream: sock() });
  }
  const pad = 'x'.repeat(Math.max(0, size - 24));
  let next = conversations;
  const get = (): void => {
    const x = ++next;
    bus.emit({ type: 'exchange-started', exchangeId: x, connectionId: 'g', time: t, scheme: 'http', method: 'GET', target: `/get/${x}`, httpVersion: '1.1', rawHeaders: ['Host', 'h:8080'], upstream: 'http://127.0.0.1:3001', upgrade: false });
    bus.emit({ type: 'request-ended', exchangeId: x, time: t + 1, rawTrailers: [] });
    bus.emit({ type: 'response-started', exchangeId: x, time: t + 2, statusCode: 200, statusMessage: 'OK', httpVersion: '1.1', rawHeaders: ['Content-Type', 'application/json'] });
    bus.emit({ type: 'response-body', exchangeId: x, time: t + 3, chunk: Buffer.from(`{"id":${x},"ok":true}`) });
    bus.emit({ type: 'exchange-completed', exchangeId: x, time: t + 4, rawTrailers: [] });
  };
  // GETs spread evenly over the message rounds (at least 1,000 rounds, so the journal writes as it goes).
  const rounds = Math.max(messages, gets > 0 ? 1_000 : 0);
  for (let i = 0, sent = 0; i < rounds; i++) {
    for (; sent < Math.round(((i + 1) * gets) / rounds); sent++) get();
    for (let x = 1; x <= conversations && i < messages; x++) {
      const data = Buffer.from(`{"n":${i},"x":${x},"p":"${pad}"}`);
      bus.emit({ type: 'ws-message', exchangeId: x, time: t + 3 + i, direction: i % 2 ? 'receive' : 'send', opcode: 1, data, frames: 1, compressed: false });
    }
    // The journal writes once a loop turn.
    if (i % 200 === 0) await turn();
  }
  await turn();
  // The journal as the capture left it, copied: a capture process gone with its conversations open (what recover and close write from).
  const base = join(dir, 'written.har');
  copyFileSync(`${out}.journal`, `${base}.journal`);
  copyFileSync(`${out}.bodies`, `${base}.bodies`);
  return base;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--write') return write(process.argv[3]!, process.argv[4]!, process.argv[5]!);
  const conversations = Number(arg('conversations', '20'));
  const messages = Number(arg('messages', '20000'));
  const size = Number(arg('size', '64'));
  const gets = Number(arg('http', '0'));
  const baseline = process.argv.includes('--baseline') ? resolve(arg('baseline', '')) : undefined;
  const dir = mkdtempSync(join(os.tmpdir(), 'bb-har-write-'));
  try {
    const bbHome = join(dir, 'home');
    const base = await record(dir, bbHome, conversations, messages, size, gets);
    const journalMiB = statSync(`${base}.journal`).size / 2 ** 20;
    console.log(`${conversations} open conversations × ${messages} messages of ~${size} B, ${gets} GETs: journal ${journalMiB.toFixed(1)} MiB`);
    for (const [name, tree] of [...(baseline ? [['baseline', baseline]] : []), ['this tree', here]] as Array<[string, string]>) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', join(here, 'bench/har-write.ts'), '--write', tree, base, bbHome], { cwd: here, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`${name}: ${run.stderr}`);
      const m = JSON.parse(run.stdout.trim().split('\n').pop()!) as { peakRssMiB: number; seconds: number; cpuSeconds: number; entries: number; held?: number };
      const sha = createHash('sha256');
      for await (const chunk of createReadStream(base)) sha.update(chunk as Buffer);
      const har = `${(statSync(base).size / 2 ** 20).toFixed(0)} MiB, sha256 ${sha.digest('hex').slice(0, 16)}`;
      console.log(`${name.padEnd(10)} peak RSS ${String(m.peakRssMiB).padStart(5)} MiB  ${m.seconds.toFixed(1)} s (CPU ${m.cpuSeconds.toFixed(1)} s)  entries ${m.entries}  held at most ${m.held ?? '(not counted)'}  HAR ${har}`);
      rmSync(base, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
