// Runs the suite: every test/**/*.test.ts through node:test with tsx.
//
//   node test/run.mjs                 every file
//   node test/run.mjs proxy capture   only files whose path contains one of the words
//   node test/run.mjs --list          how each file would run, without running it
//   node test/run.mjs --save-times    every file, then writes test/expected-times.json
//
// Why this is not one `node --test` call: most of the suite's wall time is
// waiting (servers starting, bb children, timeouts that must elapse), not CPU,
// so files run more at a time than cores (BB_TEST_CONCURRENCY, default 4), the
// longest first (their last durations on this checkout, kept in
// node_modules/.cache; on a fresh clone the committed test/expected-times.json,
// so a CI machine does not start the longest files last), and
// the files that start no process and open no socket ("pure", by the rule in
// pureReason below) share a few processes instead of paying a tsx start-up
// each. A file can ask for its own process with the comment `// test: own-process`,
// and for a quiet machine (one other job at most) with `// test: quiet`.
//
// Each file (or batch of pure files) runs as `node --import tsx --test`, whose
// --test-timeout bounds the whole process in Node 20 (240 s a file; a batch
// gets 240 s per file it holds): it is there to end a hung file, and files of
// shadow tests that take 50–90 s on a busy 2-core machine took 120 s at load
// 7–9 (the whole run takes ~11 minutes either way). A passing file prints one line; a failing
// one prints its whole spec output. Exit status: 0 all passed, 1 otherwise,
// 2 when nothing matched.
import { readdirSync, statSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const FILE_TIMEOUT_MS = 240_000;
const BATCH_SIZE = 8;
const TIMES_FILE = join(root, 'node_modules/.cache/bb-test-times.json');
/** Each file's duration in ms from one whole run (`--save-times`): the order on a checkout with no times of its own. */
const EXPECTED_TIMES_FILE = join(root, 'test/expected-times.json');

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

// What makes a file need its own process: it spawns (bb or anything), listens
// or connects, drives a browser, changes process-wide state, or uses a test
// helper that does one of these. The rule reads the file's own text; a pure
// file that trips it only costs a process, a file that should have tripped it
// and did not would share one — hence the explicit opt-out comment.
const OWN_PROCESS = [
  [/\/\/ test: own-process/, 'asks for it'],
  [/child_process|\bspawn\b|execFile|\bfork\(|runBb|bin\/bb/, 'starts processes'],
  [/\.listen\(|createServer|startProxy|startCapture|startRecording|replayCapture|runCompare|\bconnect\(|\bfetch\(|undici|from 'ws'|node:(net|http|https|http2|tls|dgram)'/, 'uses the network'],
  [/chromium|playwright/, 'drives a browser'],
  [/process\.(env\.\w+|env\[[^\]]+\])\s*=[^=]|process\.chdir|process\.on\(|process\.exitCode/, 'changes process state'],
  [/helpers\/(cli|servers|processes|recording|ports|raw|http1|scripted-upstream|browser-app|h2-peers|h2-relay|steps|readers)\.js|-harness\.js|-service\.js|compare\/helpers\.js/, 'uses a helper that does'],
];
function pureReason(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const hit = OWN_PROCESS.find(([re]) => re.test(text));
  return hit ? hit[1] : undefined;
}

const args = process.argv.slice(2);
const listOnly = args.includes('--list');
const words = args.filter((a) => !a.startsWith('--'));
const files = walk(join(root, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => relative(root, f))
  .filter((f) => words.length === 0 || words.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${words.join(' ') || 'test/**/*.test.ts'}`);
  process.exit(2);
}

const readTimes = (file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {}; // none yet: the other table, or file sizes, give the order
  }
};
const lastTimes = readTimes(TIMES_FILE);
const expectedTimes = readTimes(EXPECTED_TIMES_FILE);
const known = (f) => lastTimes[f] ?? expectedTimes[f];
// A file neither table knows (a new one) is guessed from its size, at the
// median ms per byte of the files they know, so it sorts among them.
const sizeOf = (f) => statSync(join(root, f)).size;
const msPerByte = (() => {
  const rates = files.filter((f) => known(f) !== undefined).map((f) => known(f) / sizeOf(f)).sort((a, b) => a - b);
  return rates.length > 0 ? rates[Math.floor(rates.length / 2)] : 1;
})();
const estimate = (f) => known(f) ?? sizeOf(f) * msPerByte;

const pure = files.filter((f) => pureReason(f) === undefined);
const own = files.filter((f) => !pure.includes(f));
/** One unit of work: a single file in its own process, or a batch of pure files sharing one. */
const jobs = own.map((f) => ({ files: [f] }));
for (let i = 0; i < pure.length; i += BATCH_SIZE) jobs.push({ files: pure.slice(i, i + BATCH_SIZE) });
const jobEstimate = (job) => job.files.reduce((s, f) => s + estimate(f), 0);
jobs.sort((a, b) => jobEstimate(b) - jobEstimate(a));

if (listOnly) {
  for (const f of own) console.log(`own    ${f} (${pureReason(f)})`);
  for (const f of pure) console.log(`shared ${f}`);
  console.log(`${own.length} files in their own process, ${pure.length} pure files in ${Math.ceil(pure.length / BATCH_SIZE)} shared`);
  process.exit(0);
}

const concurrency = Math.max(1, Number(process.env.BB_TEST_CONCURRENCY) || 4);
const SHARED_ENTRY = join(root, 'test/helpers/shared-process.ts');
const totals = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
const failedFiles = [];
const times = { ...lastTimes };
const started = Date.now();

/** Runs one job; resolves when its process has exited and its lines are printed. */
function runJob(job) {
  const t0 = Date.now();
  const argv = ['--import', 'tsx', '--test', `--test-timeout=${FILE_TIMEOUT_MS * job.files.length}`, '--test-reporter=spec'];
  const env = { ...process.env };
  if (job.files.length === 1 && !pure.includes(job.files[0])) argv.push(job.files[0]);
  else {
    argv.push(SHARED_ENTRY);
    env.BB_TEST_SHARED_FILES = job.files.join('\n');
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('close', (code, signal) => {
      const text = Buffer.concat(out).toString('utf8');
      const counts = {};
      for (const m of text.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
      for (const k of Object.keys(totals)) totals[k] += counts[k] ?? 0;
      const ms = Date.now() - t0;
      for (const f of job.files) times[f] = ms / job.files.length;
      const name = job.files.length === 1 ? job.files[0] : `${job.files.length} pure files (${job.files.map((f) => f.replace(/^test\//, '')).join(', ')})`;
      const ok = code === 0 && (counts.fail ?? 0) === 0 && (counts.cancelled ?? 0) === 0;
      const summary = `${String(counts.tests ?? 0).padStart(3)} tests ${(ms / 1000).toFixed(1).padStart(5)} s`;
      if (ok) console.log(`ok   ${summary}  ${name}`);
      else {
        // In a batch, each file is a top-level suite named by its path: name only those that failed.
        const marked = job.files.filter((f) => text.includes(`\n✖ ${f} (`) || text.startsWith(`✖ ${f} (`));
        failedFiles.push(...(job.files.length > 1 && marked.length > 0 ? marked : job.files));
        console.log(`FAIL ${summary}  ${name} (exit ${code ?? signal})\n${text.replace(/^/gm, '  │ ')}`);
      }
      resolve();
    });
  });
}

// Files that measure time against a real server (`// test: quiet`) run with
// at most one other job beside them: four busy jobs on two cores make a 25 ms
// delay look like noise.
const isQuiet = (job) => job.files.length === 1 && /\/\/ test: quiet/.test(readFileSync(join(root, job.files[0]), 'utf8'));
const QUIET_CONCURRENCY = Math.min(2, concurrency);
const queue = jobs.map((job) => ({ ...job, quiet: isQuiet(job) }));
await new Promise((done) => {
  let running = 0;
  let quietRunning = 0;
  const startWhatFits = () => {
    for (let i = 0; i < queue.length; i++) {
      const job = queue[i];
      const limit = quietRunning > 0 || job.quiet ? QUIET_CONCURRENCY : concurrency;
      if (running >= limit) continue;
      queue.splice(i--, 1);
      running++;
      if (job.quiet) quietRunning++;
      runJob(job).then(() => {
        running--;
        if (job.quiet) quietRunning--;
        if (queue.length === 0 && running === 0) done();
        else startWhatFits();
      });
    }
  };
  startWhatFits();
});

try {
  mkdirSync(dirname(TIMES_FILE), { recursive: true });
  writeFileSync(TIMES_FILE, JSON.stringify(times, null, 0));
} catch {
  // an unwritable cache only costs the next run its ordering
}
if (args.includes('--save-times') && words.length === 0) {
  // Whole ms, one file a line, sorted by path: a refresh reads as a small diff.
  const table = Object.fromEntries(files.map((f) => [f, Math.round(times[f])]));
  writeFileSync(EXPECTED_TIMES_FILE, `${JSON.stringify(table, null, 2)}\n`);
}
const wall = ((Date.now() - started) / 1000).toFixed(0);
console.log(`\n# files ${files.length} (${own.length} in their own process, ${pure.length} pure in ${Math.ceil(pure.length / BATCH_SIZE)} shared), concurrency ${concurrency}, ${wall} s`);
for (const k of Object.keys(totals)) console.log(`# ${k} ${totals[k]}`);
if (failedFiles.length > 0) console.log(`# failed files:\n${failedFiles.map((f) => `#   ${f}`).join('\n')}`);
process.exit(failedFiles.length > 0 ? 1 : 0);
