// The diff benchmark: time and peak RSS of `node bin/bb.js diff OLD NEW` on
// generated captures (bench/gen-capture.ts) of growing size, with the growth
// factor against the previous size measured in the same run. Files above
// 64 MiB are kept in the bounded store (diff/store/bounded.ts). Each row's
// baseline, measured in the same run on the same pair: reading both files
// and `JSON.parse` of each on one thread (a child process, its start-up left
// out); "bb ÷ parse" is the ratio issue 39 targets (≤ 2× at 50k entries).
//
//   node --import tsx bench/diff.ts [--sizes 20,1000,10000,50000,200000] [--huge] [--keep] [--profile DIR]
//   npm run bench -- diff [--huge]
//
// --profile DIR runs bb diff once more per size under --cpu-prof (one
// .cpuprofile per thread into DIR/<entries>/, stage times beside them) and
// prints where the time went (bench/profiles/diff.md reads them).
// --huge adds one pair over 600 MB each (a few minutes). Generated files are
// kept in os.tmpdir()/bb-bench-diff between runs with --keep (else a fresh
// temp folder, removed at the end).
// Needs a built dist/ (npm run bench builds it).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCapture } from './gen-capture.js';
import { markdownTable, num } from './lib/table.js';
import { hotSpots, inclusiveMs } from './lib/cpuprofile.js';

const BIN = fileURLToPath(new URL('../bin/bb.js', import.meta.url));
// Reports the child's own peak RSS and CPU (all its threads) when it exits (bb's main calls process.exit).
const PEAK = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('\\nBB_BENCH_MAXRSS_KB '+u.maxRSS+' CPU_US '+(u.userCPUTime+u.systemCPUTime)+'\\n')})`;

/** One measured size. */
export interface DiffRow {
  /** Entries per capture. */
  entries: number;
  /** Size of each capture in bytes (old). */
  bytes: number;
  /** Wall-clock seconds of bb diff. */
  seconds: number;
  /** Peak RSS of the bb process, MiB. */
  peakMiB: number;
  /** CPU seconds of the bb process, all threads (on a loaded machine the steadier figure). */
  cpuSeconds: number;
  /** Seconds to read both files and JSON.parse each on one thread (NaN when a file is too big for one string). */
  parseSeconds: number;
  /** bb diff's exit code (1: the planted differences were found). */
  exit: number;
  /** The verdict line. */
  verdict: string;
}

interface Args {
  sizes: number[];
  huge: boolean;
  keep: boolean;
  profile?: string;
}

function parseArgs(args: string[]): Args {
  const out: Args = { sizes: [20, 1000, 10_000, 50_000, 200_000], huge: false, keep: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--huge') out.huge = true;
    else if (a === '--keep') out.keep = true;
    else if (a === '--profile') out.profile = args[++i];
    else if (a === '--quick') out.sizes = [20, 1000, 10_000];
    else if (a === '--sizes') {
      const v = args[++i] ?? '';
      out.sizes = v.split(',').map(Number);
      if (!out.sizes.length || out.sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes takes entry counts like 1000,10000; got '${v}'`);
    }
  }
  return out;
}

/** Wall-clock seconds of `node bin/bb.js --version` (the CLI's start-up). */
export async function measureBoot(): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [BIN, '--version'], { stdio: 'ignore' });
  await new Promise((r) => child.on('close', r));
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Runs bb diff once and measures it. */
export async function measureDiff(oldPath: string, newPath: string): Promise<Omit<DiffRow, 'entries' | 'bytes' | 'parseSeconds'>> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--import', PEAK, BIN, 'diff', oldPath, newPath], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out.length < 4096 ? (out += c) : undefined));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const exit = await new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const kb = Number(err.match(/BB_BENCH_MAXRSS_KB (\d+)/)?.[1] ?? NaN);
  const cpuSeconds = Number(err.match(/ CPU_US (\d+)/)?.[1] ?? NaN) / 1e6;
  if (exit !== 0 && exit !== 1) throw new Error(`bb diff exited ${exit}: ${err.trim().split('\n')[0]}`);
  return { seconds, cpuSeconds, peakMiB: kb / 1024, exit, verdict: out.split('\n')[0]!.replace(/\s+\(.*$/, '') };
}

// Reads and parses both files in order on the child's one thread; prints the seconds, start-up left out.
const PARSE_BOTH = `const{readFileSync:r}=require('node:fs');const t=process.hrtime.bigint();for(const p of process.argv.slice(1))JSON.parse(r(p,'utf8'));process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e9))`;

/** Seconds to read both captures and JSON.parse each on one thread (the baseline of a row); NaN past V8's string limit. */
export async function measureParse(oldPath: string, newPath: string): Promise<number> {
  const child = spawn(process.execPath, ['-e', PARSE_BOTH, oldPath, newPath], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  const exit = await new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  return exit === 0 ? Number(out) : NaN;
}

async function pairFor(dir: string, entries: number, items?: number): Promise<{ oldPath: string; newPath: string; bytes: number }> {
  const tag = items ? `${entries}x${items}` : String(entries);
  const oldPath = join(dir, `old-${tag}.har`);
  const newPath = join(dir, `new-${tag}.har`);
  if (!existsSync(oldPath)) await generateCapture(oldPath, { entries, variant: 'old', ...(items ? { items } : {}) });
  if (!existsSync(newPath)) await generateCapture(newPath, { entries, variant: 'new', ...(items ? { items } : {}) });
  return { oldPath, newPath, bytes: (await stat(oldPath)).size };
}

/** Functions whose total time (self and below) the profile summary names: the stages' main parts. */
const PROFILED = ['readCapture', 'indexCapture', 'boundValues', 'addBefore', 'summarize', 'normalizeEntry', 'finish', 'compareLineup', 'bySimilarity'];

/** Runs bb diff under --cpu-prof into `dir` (stage times in dir/stages.txt) and prints the hot spots of each thread. */
async function profileDiff(oldPath: string, newPath: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, BIN, 'diff', oldPath, newPath], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1', BB_DIFF_STAGE_TIMES: '1' } });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c));
  await new Promise((r) => child.on('close', r));
  await writeFile(join(dir, 'stages.txt'), err);
  const root = fileURLToPath(new URL('..', import.meta.url));
  console.error(`  profile ${dir}:\n${err.split('\n').filter((l) => l.startsWith('bb diff stage')).map((l) => `    ${l}`).join('\n')}`);
  for (const f of (await readdir(dir)).filter((x) => x.endsWith('.cpuprofile')).sort()) {
    const path = join(dir, f);
    console.error(`    ${f}`);
    for (const h of hotSpots(path, 12, root)) console.error(`      ${num(h.selfMs).padStart(6)} ms ${(h.share * 100).toFixed(1).padStart(5)} %  ${h.where}`);
    const incl = [...inclusiveMs(path, PROFILED)].filter(([, ms]) => ms > 0);
    console.error(`      under: ${incl.map(([n, ms]) => `${n} ${num(ms)} ms`).join(', ')}`);
  }
}

/** Prints the table (called by bench/run.mjs through bench/lib/area.ts). */
export async function run(args: string[]): Promise<DiffRow[]> {
  const a = parseArgs(args);
  // --keep reuses one folder across runs; otherwise a fresh one (other runs may share the machine).
  const dir = a.keep ? join(tmpdir(), 'bb-bench-diff') : await mkdtemp(join(tmpdir(), 'bb-bench-diff-'));
  await mkdir(dir, { recursive: true });
  console.log(`## diff\n\n${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the start`);
  console.log('generated pairs (bench/gen-capture.ts): every 1000th entry a WebSocket connection of 2000 messages; new = old with other timestamps/uuids/ports (ids from a pool of 2,000 per side, one fresh per body) and one real change per 500 entries\n');
  // Baseline in the same run: bb's start-up alone (loading the CLI), which every row includes.
  const boot: number[] = [];
  for (let i = 0; i < 3; i++) boot.push(await measureBoot());
  boot.sort((x, y) => x - y);
  console.log(`baseline: \`node bin/bb.js --version\` takes ${num(boot[1]!, 2)} s (median of 3); every row below includes it\n`);
  const rows: DiffRow[] = [];
  const plan: Array<{ entries: number; items?: number }> = a.sizes.map((entries) => ({ entries }));
  if (a.huge) plan.push({ entries: 80_000, items: 40 });
  try {
    for (const p of plan) {
      const { oldPath, newPath, bytes } = await pairFor(dir, p.entries, p.items);
      const parseSeconds = await measureParse(oldPath, newPath);
      const m = await measureDiff(oldPath, newPath);
      rows.push({ entries: p.entries, bytes, parseSeconds, ...m });
      const r = rows.at(-1)!;
      console.error(`  ${p.entries} entries, ${(bytes / 1048576).toFixed(0)} MB: ${r.seconds.toFixed(2)} s (CPU ${r.cpuSeconds.toFixed(2)} s), ${r.peakMiB.toFixed(0)} MiB; JSON.parse of both ${r.parseSeconds.toFixed(2)} s`);
      if (a.profile) await profileDiff(oldPath, newPath, join(a.profile, String(p.entries)));
      if (!a.keep) await Promise.all([rm(oldPath, { force: true }), rm(newPath, { force: true })]);
    }
  } finally {
    if (!a.keep) await rm(dir, { recursive: true, force: true });
  }
  const table = rows.map((r, i) => {
    const prev = rows[i - 1];
    const growth = prev ? `×${num(r.seconds / prev.seconds, 1)} time for ×${num(r.bytes / prev.bytes, 1)} bytes` : '—';
    return [num(r.entries), num(r.bytes / 1048576, 1), r.bytes > 64 * 1048576 ? 'bounded' : 'in memory', num(r.seconds, 2), num(r.cpuSeconds, 2), num(r.parseSeconds, 2), Number.isFinite(r.parseSeconds) ? `${num(r.seconds / r.parseSeconds, 2)}×` : '—', num(r.peakMiB, 0), num((r.seconds * 1e6) / r.entries, 0), growth, r.verdict];
  });
  console.log(markdownTable(['entries (each)', 'MB (each)', 'mode', 'time s', 'CPU s', 'JSON.parse of both s', 'bb ÷ parse', 'peak RSS MiB', 'µs / entry', 'growth vs previous', 'verdict'], table));
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await run(process.argv.slice(2));
}
