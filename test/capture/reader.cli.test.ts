// Bad input to the readers: `bb diff`, `bb frames`, `bb show`, `bb recover`.
// Whatever the file, the answer is exit 2 with one line naming the file (and
// the JSON path, for a value of the wrong type) — never a stack trace — or,
// for a value the reader deliberately tolerates, an ordinary 0 or 1.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exchange } from '../capture/capture-harness.js';
import { FactBus } from '../../proxy/events.js';
import { openCapture, recoverCapture } from '../../capture/index.js';
import type { Har } from '../../capture/har.js';
import type { JournalRecord } from '../../capture/journal.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { baseCapture, cliProblem, pool, readersInProcess } from '../helpers/readers.js';
import { runBb } from '../helpers/cli.js';
import { loadDiffConfig } from '../../diff/index.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

/** Every path in a JSON value, with the value there. */
function paths(v: unknown, at: Array<string | number> = []): Array<[Array<string | number>, unknown]> {
  const out: Array<[Array<string | number>, unknown]> = [[at, v]];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

/** A value of another JSON type. */
function wrongType(v: unknown): unknown {
  if (typeof v === 'string') return 42;
  if (typeof v === 'number') return 'forty-two';
  if (typeof v === 'boolean') return 'yes';
  if (Array.isArray(v)) return { not: 'an array' };
  if (v && typeof v === 'object') return ['not', 'an object'];
  return 'x';
}

/** Sets the value at `at` in a deep copy. */
function withValue(doc: unknown, at: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let o = copy;
  for (const k of at.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[at.at(-1)!] = value;
  return copy;
}

/** "log.entries[0].request.url" from a path. */
const jsonPath = (at: Array<string | number>): string => at.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');

describe('bad input to the readers', () => {
  const cleanups = new Cleanups();
  let dir: string;
  let basePath: string;
  const files: Record<string, string> = {};

  before(async () => {
    dir = tempDir(cleanups).dir;
    basePath = join(dir, 'base.har');
    const base = JSON.stringify(baseCapture(), null, 1);
    await writeFile(basePath, base);
    const put = async (name: string, text: string) => {
      files[name] = join(dir, name);
      await writeFile(files[name]!, text);
    };
    for (const cut of [1, 10, 200, Math.floor(base.length / 2), base.length - 2]) await put(`truncated-at-${cut}.har`, base.slice(0, cut));
    await put('not-a-har-object.har', '{"hello": "world"}');
    await put('not-a-har-array.har', '[1, 2, 3]');
    await put('not-a-har-string.har', '"a string"');
    await put('not-a-har-null.har', 'null');
    await put('log-is-an-array.har', '{"log": []}');
    await put('entries-is-an-object.har', '{"log": {"version": "1.2", "entries": {}}}');
    await put('no-entries.har', '{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": []}}');
    await put('empty.har', '');
    await put('whitespace.har', ' \n\t\n');
    await put('binary.har', '\u0000\u0001\u0002PK\u0003\u0004');
    await put('bom-only.har', '\ufeff');
    const b64 = baseCapture();
    b64.log.entries[1]!.response.content.text = 'not*base64!';
    await put('invalid-base64-body.har', JSON.stringify(b64));
    const b64req = baseCapture();
    b64req.log.entries[0]!.request.postData = { mimeType: 'application/octet-stream', text: '%%%', _encoding: 'base64' };
    await put('invalid-base64-request.har', JSON.stringify(b64req));
    files['a directory'] = join(dir, 'folder.har');
    await mkdir(files['a directory']!);
    files['a missing file'] = join(dir, 'missing.har');
  });
  after(() => cleanups.run());

  it('refuses every unusable file in every reader with one sentence naming the file (in process)', async () => {
    const problems: string[] = [];
    for (const [name, path] of Object.entries(files)) {
      for (const [cmd, o] of Object.entries(await readersInProcess(path, basePath))) {
        if (o.code !== 2) problems.push(`${cmd} ${name}: ${o.code} ${o.message ?? ''}`);
        else if (!o.message!.includes(path) || o.message!.includes('\n')) problems.push(`${cmd} ${name}: ${o.message}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('answers exit 2 with one line naming the file through the CLI (each kind of file, the commands in turn)', async () => {
    const cmds = ['show', 'diff', 'frames'] as const;
    // Child processes are slow on a busy 2-core machine: one of each kind here (all of them in process above).
    const kinds = ['truncated-at-200.har', 'not-a-har-object.har', 'entries-is-an-object.har', 'empty.har', 'binary.har',
      'invalid-base64-body.har', 'a directory', 'a missing file'];
    const problems = (await pool(kinds, 2, async (name, i) => {
      const path = files[name];
      assert.ok(path, `no file ${name}`);
      const cmd = cmds[i % 3]!;
      const r = await runBb(cmd === 'diff' ? ['diff', basePath, path] : [cmd, path]);
      const p = cliProblem(r, true) ?? (r.stderr.includes(path) ? undefined : `the line does not name ${path}: ${r.stderr}`);
      return p && `${cmd} ${name}: ${p}`;
    })).filter(Boolean);
    assert.deepEqual(problems, []);
  });

  it('names the JSON path of an invalid base64 body', async () => {
    const r = await runBb(['show', files['invalid-base64-body.har']!]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /log\.entries\[1\]\.response\.content\.text must be base64/);
    const q = await runBb(['diff', basePath, files['invalid-base64-request.har']!]);
    assert.equal(q.code, 2);
    assert.match(q.stderr, /log\.entries\[0\]\.request\.postData\.text must be base64/);
  });

  it('gives a wrong type at every level of a HAR a clean 2 naming its path, or reads it as the reader tolerates', async () => {
    const base = baseCapture();
    const all = paths(base).filter(([at]) => at.length > 0);
    const refused: string[] = [];
    const tolerated: string[] = [];
    const problems: string[] = [];
    for (const [i, [at, value]] of all.entries()) {
      const file = join(dir, `wrong-${i}.har`);
      await writeFile(file, JSON.stringify(withValue(base, at, wrongType(value))));
      const outcomes = await readersInProcess(file, basePath);
      for (const [cmd, o] of Object.entries(outcomes)) {
        if (o.code === -1) problems.push(`${cmd} crashed on ${jsonPath(at)}: ${o.message}`);
        else if (o.code === 2 && !o.message?.includes(jsonPath(at)) && !o.message?.includes(file)) problems.push(`${cmd} ${jsonPath(at)}: ${o.message}`);
      }
      (outcomes.show.code === 2 ? refused : tolerated).push(jsonPath(at));
    }
    assert.deepEqual(problems, []);
    // The fields every HAR must have typed right are refused (the reader fills the optional ones, and
    // keeps numbers as header text, as several exporters write them).
    for (const must of ['log', 'log.entries', 'log.entries[0]', 'log.entries[0].request', 'log.entries[0].request.method',
      'log.entries[0].request.url', 'log.entries[0].request.headers', 'log.entries[0].request.headers[0].name',
      'log.entries[0].response.status', 'log.entries[0].response.content', 'log.entries[0].response.content.text',
      'log.entries[2]._webSocketMessages', 'log.entries[2]._webSocketMessages[0].type', 'log.entries[2]._webSocketMessages[0].time',
      'log.entries[2]._webSocketMessages[0].data', 'log._bb.complete']) {
      assert.ok(refused.includes(must), `${must} of the wrong type is accepted`);
    }
    // A sample through the CLI too: one line, the path named.
    const sample = all.filter((_, i) => i % 40 === 3).slice(0, 4);
    const cli = (await pool(sample, 2, async ([at, value], k) => {
      const file = join(dir, `wrong-cli-${k}.har`);
      await writeFile(file, JSON.stringify(withValue(base, at, wrongType(value))));
      const r = await runBb(['diff', basePath, file]);
      const p = cliProblem(r, false) ?? (r.code === 2 && !r.stderr.includes(jsonPath(at)) && !/complete|empty/.test(r.stderr) ? `no path in ${r.stderr}` : undefined);
      return p && `${jsonPath(at)}: ${p}`;
    })).filter(Boolean);
    assert.deepEqual(cli, []);
    assert.ok(all.length > 100, `${all.length} paths tried`);
  });

  it('refuses a config with a bad regular expression, bad JSON or wrong types with one line naming the file and key', async () => {
    const configs: Array<[string, string, RegExp]> = [
      ['bad-regex.json', '{"normalize": {"patterns": [{"regex": "(unclosed"}]}}', /normalize\.patterns\[0\]\.regex/],
      ['bad-flags.json', '{"normalize": {"patterns": [{"regex": "a", "flags": "zz"}]}}', /normalize\.patterns\[0\]/],
      ['bad-key-pattern.json', '{"normalize": {"keys": [{"pattern": "[", "replace": "<X>"}]}}', /normalize\.keys\[0\]/],
      ['not-json.json', '{"normalize": ', /not valid JSON|JSON/],
      ['wrong-type.json', '{"normalize": []}', /normalize/],
      ['known-no-reason.json', '{"known": [{"where": "*", "path": "x"}]}', /known\[0\]/],
      ['empty.json', '', /bb\.config|empty|JSON/],
    ];
    const problems: string[] = [];
    for (const [name, text, pathRe] of configs) {
      const file = join(dir, name);
      await writeFile(file, text);
      try {
        await loadDiffConfig(file);
        problems.push(`${name} was accepted`);
      } catch (err) {
        const e = err as Error;
        if (!isBbError(e) || exitStatusFor(e) !== 2 || !e.message.includes(name) || !pathRe.test(e.message) || e.message.includes('\n')) problems.push(`${name}: ${e.stack}`);
      }
    }
    assert.deepEqual(problems, []);
    const r = await runBb(['diff', basePath, basePath, '--config', join(dir, 'bad-regex.json')]);
    assert.equal(cliProblem(r, true), undefined);
    assert.match(r.stderr, /bad-regex\.json.*normalize\.patterns\[0\]\.regex/);
    const grep = await runBb(['frames', basePath, '--grep', '(']);
    assert.equal(cliProblem(grep, true), undefined);
    const missing = await runBb(['diff', basePath, basePath, '--config', join(dir, 'nope.json')]);
    assert.equal(cliProblem(missing, true), undefined);
    assert.match(missing.stderr, /nope\.json/);
  });

  it('recovers from a journal cut mid-line everything that precedes the cut, at every cut point', async () => {
    // A real journal: 6 exchanges recorded through openCapture, copied before close (as a crash leaves it).
    const jdir = join(dir, 'journal');
    await mkdir(jdir);
    const out = join(jdir, 'live.har');
    const cap = await openCapture({ out, label: 'j', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: join(jdir, 'home') });
    const bus = new FactBus();
    bus.on(cap.listener);
    for (let i = 0; i < 6; i++) {
      for (const f of exchange({ target: `/item/${i}`, status: 200, resHeaders: ['Content-Type', 'application/json'], resBody: [Buffer.from(`{"i":${i}}`)] })) bus.emit(f);
    }
    await new Promise((r) => setImmediate(r));
    const journal = await readFile(`${out}.journal`);
    const bodies = await readFile(`${out}.bodies`);
    await cap.close();
    const lines = journal.toString('utf8').split('\n').filter(Boolean);
    const lineEnds: number[] = [];
    let at = 0;
    for (const l of lines) lineEnds.push((at += Buffer.byteLength(l) + 1));

    // Cut inside every line after the header: what survives is the exchanges whose `done` line is whole.
    let cli = 0;
    for (let k = 1; k < lines.length; k++) {
      const cutAt = lineEnds[k - 1]! + Math.max(1, Math.floor(Buffer.byteLength(lines[k]!) / 2));
      const cdir = join(jdir, `cut-${k}`);
      await mkdir(cdir);
      const cout = join(cdir, 'live.har');
      await writeFile(`${cout}.journal`, journal);
      await truncate(`${cout}.journal`, cutAt);
      await writeFile(`${cout}.bodies`, bodies);
      // Folded lines (journal format 3) stand for several records: a response start carries its done.
      const whole = lines.slice(0, k).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord)) as Array<{ r: string; x?: number; target?: string }>;
      const targetOf = new Map(whole.filter((r) => r.r === 'start').map((r) => [r.x, r.target]));
      const done = whole.filter((r) => r.r === 'done').map((r) => targetOf.get(r.x)).sort();
      let har: Har;
      if (k === 5) {
        // Through the CLI for a few cuts: exit 0, the path printed, the torn record counted.
        const r = await runBb(['recover', cout], { BB_HOME: join(jdir, 'home') });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /torn record/);
        cli++;
      } else {
        const res = await recoverCapture(cout, { bbHome: join(jdir, 'home') });
        assert.equal(res.dropped, 1, `cut in line ${k}`);
      }
      har = JSON.parse(await readFile(cout, 'utf8')) as Har;
      assert.equal(har.log._bb?.complete, false);
      const completed = har.log.entries.filter((e) => !e._bb?.inFlight).map((e) => new URL(e.request.url).pathname).sort();
      assert.deepEqual(completed, done, `cut in line ${k}: the completed exchanges before the cut`);
      for (const e of har.log.entries.filter((e) => !e._bb?.inFlight)) {
        assert.equal(e.response.content.text, `{"i":${new URL(e.request.url).pathname.split('/')[2]}}`, 'bodies intact');
      }
    }
    assert.ok(cli >= 1);
  });

  it('refuses what bb recover cannot use with one line: no journal, a directory, an empty or foreign journal', async () => {
    const rdir = join(dir, 'recover');
    await mkdir(rdir);
    await writeFile(join(rdir, 'empty.har.journal'), '');
    await writeFile(join(rdir, 'foreign.har.journal'), '{"not": "a bb journal"}\n{"r": "start"}\n');
    await writeFile(join(rdir, 'garbage.har.journal'), '\u0000\u0001garbage\n');
    await mkdir(join(rdir, 'dir.har.journal'));
    const cases = ['nothing-here.har', 'empty.har', 'foreign.har', 'garbage.har', 'dir.har'];
    const problems: string[] = [];
    for (const name of cases) {
      try {
        const res = await recoverCapture(join(rdir, name), { bbHome: join(rdir, 'home') });
        problems.push(`${name} recovered ${res.entries} entries`);
      } catch (err) {
        const e = err as Error;
        if (!isBbError(e) || exitStatusFor(e) !== 2 || !e.message.includes(name) || e.message.includes('\n')) problems.push(`${name}: ${e.stack}`);
      }
    }
    for (const name of ['nothing-here.har', 'foreign.har']) {
      const r = await runBb(['recover', join(rdir, name)], { BB_HOME: join(rdir, 'home') });
      const p = cliProblem(r, true) ?? (r.stderr.includes(name) ? undefined : `does not name ${name}: ${r.stderr}`);
      if (p) problems.push(`cli ${name}: ${p}`);
    }
    assert.deepEqual(problems, []);
  });
});
