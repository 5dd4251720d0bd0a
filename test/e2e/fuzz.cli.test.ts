// The fuzz loop: seeded mutations of real captures (the shared fixtures from
// Chrome, Firefox, Charles, a literal bb capture, and one recorded here
// through the proxy) fed to every reader. A mutant that is still a valid HAR
// gives 0 or 1; one that is not gives a clean 2 with one sentence; nothing
// else, ever. Bounded by a case count and a deadline; BB_FUZZ_CASES and
// BB_FUZZ_CLI raise the counts for a longer run.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';
import { once } from 'node:events';
import type { Har } from '../../capture/har.js';
import { harProblems } from '../helpers/har-schema.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { echoServer, get, record } from '../helpers/recording.js';
import { baseCapture, cliProblem, pool, readersInProcess, type Outcome } from '../helpers/readers.js';
import { runBb } from '../helpers/cli.js';
import { Rand, mutateStructure, mutateText } from './mutate.js';
import { exchange } from '../capture/capture-harness.js';
import { FactBus } from '../../proxy/events.js';
import { openCapture, recoverCapture } from '../../capture/index.js';
import { mkdir } from 'node:fs/promises';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';
import { sharedFixture } from '../helpers/fixtures.js';

const CASES = Number(process.env.BB_FUZZ_CASES ?? 2000);
const JOURNAL_CASES = Number(process.env.BB_FUZZ_JOURNALS ?? 300);
const CLI_CASES = Number(process.env.BB_FUZZ_CLI ?? 8);
const DEADLINE_MS = Number(process.env.BB_FUZZ_MS ?? 30_000);

/** One mutant and what it is expected to be. */
interface Mutant {
  seed: number;
  origin: string;
  text: string;
  what: string;
  /** Still JSON and valid by the HAR 1.2 schema, with entries, complete. */
  validHar: boolean;
}

function makeMutant(corpus: Array<{ path: string; doc: Har; text: string }>, seed: number): Mutant {
  const r = new Rand(seed);
  const item = corpus[r.int(corpus.length)]!;
  if (r.float() < 0.3) {
    const m = mutateText(item.text, r);
    let validHar = false;
    try {
      validHar = isUsableHar(JSON.parse(m.text.replace(/^\ufeff/, '')));
    } catch {
      // Not JSON: must be a 2.
    }
    return { seed, origin: item.path, text: m.text, what: m.what, validHar };
  }
  const doc = structuredClone(item.doc);
  const what: string[] = [];
  for (let k = 1 + r.int(3); k > 0; k--) what.push(mutateStructure(doc, r));
  const text = JSON.stringify(doc);
  return { seed, origin: item.path, text, what: what.join('; '), validHar: isUsableHar(JSON.parse(text)) };
}

function isUsableHar(doc: unknown): boolean {
  const log = (doc as Har | null)?.log;
  if (!Array.isArray(log?.entries) || log.entries.length === 0 || log._bb?.complete === false) return false;
  try {
    return harProblems(doc).length === 0;
  } catch {
    // The schema helper's extra checks assume objects where the schema already said no.
    return false;
  }
}

/** Why a set of outcomes is wrong for this mutant, or undefined. */
function judge(m: Mutant, outcomes: Record<string, Outcome>): string | undefined {
  for (const [cmd, o] of Object.entries(outcomes)) {
    if (o.code === -1) return `${cmd} crashed: ${o.message}`;
    if (![0, 1, 2].includes(o.code)) return `${cmd} gave ${o.code}`;
    if (o.code === 2 && (!o.message || o.message.includes('\n'))) return `${cmd}: exit 2 without one sentence: ${o.message}`;
  }
  // A valid HAR compares (0 or 1). The schema does not look into extension fields (`_...`) or
  // `cache`, nor at base64 text: bb checks those it reads, and may refuse them.
  const beyondSchema = /base64|\._[A-Za-z]|\.cache /;
  if (m.validHar && outcomes.diff!.code === 2 && !beyondSchema.test(outcomes.diff!.message ?? '')) return `diff refused a valid HAR: ${outcomes.diff!.message}`;
  return undefined;
}

describe('fuzzing the readers with seeded mutations of real captures', () => {
  const cleanups = new Cleanups();
  const corpus: Array<{ path: string; doc: Har; text: string }> = [];
  let dir: string;

  before(async () => {
    dir = tempDir(cleanups, 'bb-fuzz-').dir;
    const add = async (name: string, doc: Har) => {
      // Few entries per file keep each case cheap; the shapes are what matter.
      doc.log.entries = doc.log.entries.slice(0, 5);
      const path = join(dir, `corpus-${name}.har`);
      const text = JSON.stringify(doc);
      await writeFile(path, text);
      corpus.push({ path, doc, text });
    };
    for (const name of ['chrome', 'firefox', 'charles', 'head-content-length']) {
      const file = sharedFixture(undefined, `${name}.har`);
      if (file) await add(name, JSON.parse((await readFile(file, 'utf8')).replace(/^\ufeff/, '')) as Har);
    }
    await add('literal', baseCapture());
    // And one recorded here: HTTP with bodies and a WebSocket conversation.
    const upstream = await echoServer(cleanups);
    const rec = await record(cleanups, upstream.url);
    for (let i = 0; i < 3; i++) await get(rec.port, `/item/${i}?token=t${i}`, { Authorization: 'Bearer x' });
    const ws = new WebSocket(`ws://127.0.0.1:${rec.port}/live`);
    await once(ws, 'open');
    const echoes = new Promise<void>((resolve) => {
      let n = 0;
      ws.on('message', () => ++n === 3 && resolve());
    });
    ws.send('{"type":"hello","n":1}');
    ws.send(Buffer.from([1, 2, 3]));
    ws.send('{"type":"bye"}');
    await echoes;
    ws.close(1000, 'done');
    await once(ws, 'close');
    await add('recorded', await rec.finish());
  });
  after(() => cleanups.run());

  it(`gives ${CASES} in-process mutants 0, 1 or a clean 2, never a crash`, async (t) => {
    assert.ok(corpus.length >= 2, 'a corpus');
    const file = join(dir, 'mutant.har');
    const started = Date.now();
    const failures: string[] = [];
    let cases = 0;
    let valid = 0;
    const codes = { 0: 0, 1: 0, 2: 0 } as Record<number, number>;
    for (let seed = 1; seed <= CASES && Date.now() - started < DEADLINE_MS; seed++) {
      const m = makeMutant(corpus, seed);
      await writeFile(file, m.text);
      const outcomes = await readersInProcess(file, m.origin);
      const problem = judge(m, outcomes);
      if (problem && failures.length < 10) failures.push(`seed ${seed} (${m.origin.split('/').pop()}: ${m.what}): ${problem}`);
      cases++;
      if (m.validHar) valid++;
      codes[outcomes.diff.code] = (codes[outcomes.diff.code] ?? 0) + 1;
    }
    t.diagnostic(`${cases} mutants in ${Date.now() - started} ms: ${valid} still valid HARs; diff exits ${JSON.stringify(codes)}`);
    assert.deepEqual(failures, []);
    // Bounded by time on a busy machine, but never vacuous: both kinds of mutants were tried.
    assert.ok(cases >= Math.min(CASES, 300), `only ${cases} cases ran`);
    assert.ok(valid > 0 && codes[2]! > 0, 'both valid and invalid mutants');
  });

  it(`recovers ${JOURNAL_CASES} mutated journals or refuses them in one sentence, never a crash`, async (t) => {
    // A real journal (HTTP with bodies, a failure, an abort), then records mutated line by line.
    const jdir = join(dir, 'journals');
    await mkdir(jdir);
    const live = join(jdir, 'live.har');
    const home = join(jdir, 'home');
    const cap = await openCapture({ out: live, label: 'j', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: home });
    const bus = new FactBus();
    bus.on(cap.listener);
    for (let i = 0; i < 4; i++) {
      for (const f of exchange({ target: `/j/${i}`, status: 200, reqBody: [Buffer.from('{"q":1}')], resHeaders: ['Content-Type', 'application/json', 'Content-Encoding', i === 2 ? 'gzip' : 'identity'], resBody: [Buffer.from(`{"i":${i}}`)] })) bus.emit(f);
    }
    for (const f of exchange({ target: '/j/failed', end: { type: 'exchange-failed', exchangeId: 0, time: 0, error: { code: 'ECONNREFUSED', message: 'refused', phase: 'connect' } } as never })) bus.emit(f);
    await new Promise((r) => setImmediate(r));
    const journal = await readFile(`${live}.journal`, 'utf8');
    const bodies = await readFile(`${live}.bodies`);
    await cap.close();
    const lines = journal.split('\n').filter(Boolean);
    const failures: string[] = [];
    let recovered = 0;
    let refused = 0;
    for (let seed = 1; seed <= JOURNAL_CASES; seed++) {
      const r = new Rand(seed * 31);
      const copy = lines.map((l) => JSON.parse(l) as unknown);
      let text: string;
      if (r.float() < 0.25) {
        text = mutateText(journal, r).text;
      } else {
        // Mutate one to three records (never only the header: that is the refusal case above).
        for (let k = 1 + r.int(3); k > 0; k--) mutateStructure(copy[r.int(copy.length)], r);
        text = copy.map((c) => JSON.stringify(c)).join('\n') + '\n';
      }
      const cdir = join(jdir, `m${seed}`);
      await mkdir(cdir);
      const out = join(cdir, 'cap.har');
      await writeFile(`${out}.journal`, text);
      await writeFile(`${out}.bodies`, bodies);
      try {
        await recoverCapture(out, { bbHome: home });
        JSON.parse(await readFile(out, 'utf8'));
        // What bb recover writes, bb's readers read (or refuse in one sentence).
        const read = await readersInProcess(out, out);
        for (const [cmd, o] of Object.entries(read)) if (o.code === -1 && failures.length < 10) failures.push(`seed ${seed}: ${cmd} of the recovered HAR crashed: ${o.message}`);
        recovered++;
      } catch (err) {
        const e = err as Error;
        if (!isBbError(e) || e.message.includes('\n')) {
          if (failures.length < 10) failures.push(`seed ${seed}: ${e.stack}`);
        } else refused++;
      }
    }
    t.diagnostic(`${JOURNAL_CASES} journal mutants: ${recovered} recovered, ${refused} refused in one sentence`);
    assert.deepEqual(failures, []);
    assert.ok(recovered > 0);
  });

  it(`gives ${CLI_CASES} mutants through the CLI the same verdicts, in one line`, async () => {
    const seeds = Array.from({ length: CLI_CASES }, (_, i) => 100_000 + i * 7);
    const failures = (await pool(seeds, 2, async (seed, i) => {
      const m = makeMutant(corpus, seed);
      const file = join(dir, `cli-${i}.har`);
      await writeFile(file, m.text);
      const inProcess = await readersInProcess(file, m.origin);
      const cmd = (['diff', 'show', 'frames'] as const)[i % 3]!;
      const run = await runBb(cmd === 'diff' ? ['diff', m.origin, file] : [cmd, file]);
      const problem = cliProblem(run, false) ?? (run.code !== inProcess[cmd].code ? `exit ${run.code}, in process ${inProcess[cmd].code}` : undefined);
      return problem && `seed ${seed} ${cmd} (${m.what}): ${problem}`;
    })).filter(Boolean);
    assert.deepEqual(failures, []);
  });
});
