// Every command output shown in README.md and docs/*.md comes from a real
// run of this build and keeps its shape (test/docs/output-shape.ts says the
// rule and the marker). The runs are few and shared: one `bb demo` (its
// capture is then replayed), one `bb compare --repeat 3` for the timing
// blocks, one recorded upgrade pair diffed once, one live log against an
// https server bb does not trust, one route retired behind a 404 page, one
// ratification followed by a regressed build. They run side by side in one before().
// test: quiet — it times a real server's routes (test/run.mjs runs it beside one other job at most).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBb, startBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { startRecording } from '../../scenario/index.js';
import { retiredRouteApp, RETIRED_ROUTE_CALLS } from '../helpers/retired-route.js';
import { createLeafFactory, loadOrCreateCa } from '../../proxy/tls/index.js';
import { driveUpgradeService, startUpgradeService } from '../e2e/upgrade-service.js';
import { mask, realLines, shapeMismatch, shownBlocks, type ShownBlock } from './output-shape.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((n) => n.endsWith('.md')).sort().map((n) => `docs/${n}`)];
const blocks: ShownBlock[] = pages.flatMap((page) => shownBlocks(page, readFileSync(join(root, page), 'utf8')));

const tmp = tempDir();
const cwd = tmp.dir;
const env = { BB_HOME: tmp.bbHome };
// stdout and stderr in one pipe, in the order bb wrote them (as a terminal shows them).
const merged = { cwd, sh: 'exec 2>&1' };
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** `bb demo`, then its old capture replayed against a fresh new-variant demo server. */
async function demoAndReplay(): Promise<Record<string, string>> {
  const demo = await runBb(['demo'], env, merged);
  assert.equal(demo.code, 0, demo.stdout);
  const run = readdirSync(join(cwd, 'captures')).find((n) => n.startsWith('demo-'))!;
  const server = spawn(process.execPath, [join(root, 'dist/scenario/compare/demo/server.js'), '--variant', 'new'], { stdio: ['ignore', 'pipe', 'inherit'] });
  closers.push(() => new Promise((r) => (server.exitCode !== null ? r(0) : (server.once('exit', r), server.kill('SIGTERM')))));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (c) => {
      out += c;
      const ready = /READY (\{.*\})/.exec(out);
      if (ready) resolve((JSON.parse(ready[1]) as { port: number }).port);
    });
    server.once('exit', () => reject(new Error(`the demo server exited: ${out}`)));
  });
  const replay = await runBb(['replay', `captures/${run}/old.har`, '--target', `http://127.0.0.1:${port}`, '--out', 'captures/new.har'], env, { cwd });
  assert.equal(replay.code, 0, replay.stdout + replay.stderr);
  return { 'bb demo': demo.stdout, 'bb replay': replay.stdout };
}

const TIMING_RUN = 'bb compare --repeat 3 --timing-budget 1.5';

/** `bb compare --repeat 3 --timing-budget 1.5` on the timing fixture (new /slow waits 40 ms instead of 10). */
async function timing(): Promise<Record<string, string>> {
  const fixtures = join(root, 'test/scenario/fixtures');
  const server = (slowMs: number) => ({ command: 'node', args: [join(fixtures, 'timing-server.mjs'), String(slowMs)] });
  const config = await tmp.write('timing.json', { servers: { old: server(10), new: server(40) }, scenario: join(fixtures, 'timing-scenario.mjs') });
  const r = await runBb(['compare', '--config', config, '--repeat', '3', '--timing-budget', '1.5', '--out', 'run'], env, merged);
  // On a quiet machine /slow is over budget (exit 1); under heavy load its interval can widen past the
  // budget's edge. Either way the exit status is the one the printed verdict states.
  assert.equal(r.code, /OVER BUDGET/.test(r.stdout) ? 1 : 0, r.stdout);
  return { [TIMING_RUN]: r.stdout };
}

/** The upgrade pair: old through `bb capture` (its live log), new through the library; then `bb diff old.har new.har`. */
async function upgradePair(): Promise<Record<string, string>> {
  const [v1, v2] = await Promise.all([startUpgradeService(1), startUpgradeService(2)]);
  closers.push(() => v1.close(), () => v2.close());
  const capture = startBb(['capture', '--target', v1.url, '--out', 'old.har'], env, { cwd, timeoutMs: 30_000 });
  const [, base] = await capture.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
  await driveUpgradeService(base!);
  capture.child.kill('SIGINT');
  assert.equal(await capture.exited, 0, capture.stderr());
  const rec = await startRecording({ target: v2.url, out: tmp.path('new.har'), bbHome: tmp.bbHome });
  await driveUpgradeService(rec.url);
  await rec.close(1000);
  const diff = await runBb(['diff', 'old.har', 'new.har'], env, { cwd });
  assert.equal(diff.code, 1, diff.stdout + diff.stderr);
  return { 'bb capture': capture.stdout(), 'bb diff old.har new.har': diff.stdout };
}

/** `bb capture` in front of an https server whose CA bb was not given: the live log's 502 line. */
async function untrustedUpstream(): Promise<Record<string, string>> {
  const leaf = await createLeafFactory(await loadOrCreateCa(tmp.path('upstream-ca'))).pemFor('127.0.0.1');
  const server = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, (_req, res) => res.end('never reached'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(r)));
  const capture = startBb(['capture', '--target', `https://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', 'tls.har'], env, { cwd, timeoutMs: 30_000 });
  const [, base] = await capture.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
  assert.equal((await fetch(`${base}/v1/items`)).status, 502);
  await capture.waitFor(/ 502 /);
  capture.child.kill('SIGINT');
  assert.equal(await capture.exited, 0, capture.stderr());
  return { 'bb capture (untrusted https target)': capture.stdout() };
}

/** A route retired behind a 404 page between two recordings of one app: `bb diff` folds what follows under the status finding. */
async function retiredRoute(): Promise<Record<string, string>> {
  const app = await retiredRouteApp();
  closers.push(() => app.close());
  for (const build of ['old', 'new'] as const) {
    app.setBuild(build);
    const rec = await startRecording({ target: app.url, out: tmp.path(`retired-${build}.har`), bbHome: tmp.bbHome });
    for (const path of RETIRED_ROUTE_CALLS) await (await fetch(`${rec.url}${path}`)).text();
    await rec.close(1000);
  }
  const diff = await runBb(['diff', 'retired-old.har', 'retired-new.har'], env, { cwd });
  assert.equal(diff.code, 1, diff.stdout + diff.stderr);
  return { 'bb diff retired-old.har retired-new.har': diff.stdout };
}

const RATIFIED_RUN = 'bb known add --all, then bb diff old.har regressed.har';

/**
 * docs/diff.md's ratification: POST /items answers 201 in old, 200 in new (ratified with `bb known add --all`)
 * and 500 in a regressed build, which is real again. Its own folder, so its bb.config.json is the one it writes.
 */
async function ratifiedThenRegressed(): Promise<Record<string, string>> {
  let status = 201;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.method === 'POST' ? status : 200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(req.method === 'POST' ? { name: 'pen' } : [{ name: 'pen' }]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(r)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = tmp.path('ratified');
  await mkdir(dir);
  for (const [name, answer] of [['old', 201], ['new', 200], ['regressed', 500]] as const) {
    status = answer;
    const rec = await startRecording({ target: url, out: join(dir, `${name}.har`), bbHome: tmp.bbHome });
    await (await fetch(`${rec.url}/items`, { method: 'POST', body: '{"name":"pen"}', headers: { 'content-type': 'application/json' } })).text();
    await (await fetch(`${rec.url}/items`)).text();
    await rec.close(1000);
  }
  const first = await runBb(['diff', 'old.har', 'new.har', '--json', 'report.json'], env, { cwd: dir });
  assert.equal(first.code, 1, first.stdout + first.stderr);
  const add = await runBb(['known', 'add', '--all', '--from', 'report.json', '--reason', 'creates answer 200'], env, { cwd: dir, sh: 'exec 2>&1' });
  assert.equal(add.code, 0, add.stdout);
  const again = await runBb(['diff', 'old.har', 'regressed.har', '--config', 'bb.config.json'], env, { cwd: dir, sh: 'exec 2>&1' });
  assert.equal(again.code, 1, again.stdout);
  return { [RATIFIED_RUN]: add.stdout + again.stdout };
}

describe('the outputs shown in the docs', () => {
  let real: Record<string, string> = {};
  before(async () => {
    const runs = await Promise.all([demoAndReplay(), timing(), upgradePair(), untrustedUpstream(), retiredRoute(), ratifiedThenRegressed()]);
    real = Object.assign({}, ...runs) as Record<string, string>;
    // BB_DOCS_OUTPUTS=folder keeps each real output there (paths relative), to paste into a page after a change.
    if (process.env.BB_DOCS_OUTPUTS) {
      for (const [name, text] of Object.entries(real)) await writeFile(join(process.env.BB_DOCS_OUTPUTS, `${name.replace(/[^\w.-]+/g, '_')}.txt`), realLines(text, cwd).join('\n') + '\n');
    }
  });

  it('masks what varies and keeps the words', () => {
    const table: Array<[string, string]> = [
      ['#7 GET /v1/items 200 1.2 KB 3 ms', '#N GET /vN/items N <SIZE> <TIME>'],
      ['#5 GET /posts/0b3c8f2e-51a4-4d7e-9a0c-2f1e5d6c7b8a 200 84 B 1 ms', '#N GET /posts/<UUID> N <SIZE> <TIME>'],
      ['  [Fbf82ddb54] response.headers.x-powered-by removed "shelf" in 9 of 9 entries, 6 routes', '  [<ID>] response.headers.x-powered-by removed "shelf" in N of N entries, N routes'],
      ['  timing/GET /a     ~            ×0.91 [0.64, 1.29]  -0.99 ms (10.5 → 9.47 ms)  p=2.2e-10', '  timing/<ROUTE> <VERDICT> ×N [N, N] <TIME> (N → <TIME>) p=N'],
      ['  timing/GET /slow  slower       ×3.59 [3.45, 4.03]  +31.0 ms (12.0 → 43.0 ms)  p=2.2e-10  n=18/18  OVER BUDGET', '  timing/<ROUTE> <VERDICT> ×N [N, N] <TIME> (N → <TIME>) p=N n=N/N'],
      ['MATCH with 1 known  (20 pairs; captures/demo-20261201-212706/old.har', 'MATCH with N known (N pairs; captures/demoNN/old.har'],
      ['- "Error: x\\n    at f (file:///work/main/scenario…', '- "Error: x\\n at f (file://<PATH>…'],
      ['KNOWN-DIFF [47fec6dfbb] errors/POST', 'KNOWN-DIFF [<ID>] errors/POST'],
    ];
    for (const [line, masked] of table) assert.equal(mask(line), masked, line);
  });

  it('holds a block to a contiguous run of the real lines, … taking any number', () => {
    const real = ['a 1', 'b 2', 'c 3', 'd 4'];
    assert.equal(shapeMismatch(['b 7', 'c 8'], real), undefined);
    assert.equal(shapeMismatch(['$ bb x', 'a 1', '…', 'd 9'], real), undefined);
    assert.match(shapeMismatch(['a 1', 'c 3'], real) ?? '', /line 2 of the block/);
    assert.match(shapeMismatch(['b 1', 'x'], real) ?? '', /shown: x\n {2}real: {2}c N/);
  });

  it('marks every block that shows a command output', () => {
    // Lines only bb prints (a finding's id is F and 9 hex digits): an unmarked block with one is an output nobody
    // checks, in a list item (indented further) too.
    const outputish = /^(DIFF: |MATCH|bb: |replayed |#\d+ (GET|POST)|Timing \(|\[F[0-9a-f]{9}\])/;
    const marked = new Set(blocks.flatMap((b) => b.lines.map((l) => l.trim())));
    for (const page of pages) {
      const lines = readFileSync(join(root, page), 'utf8').split('\n');
      lines.forEach((line, i) => {
        const text = line.trim();
        if (line.startsWith('    ') && outputish.test(text)) assert.ok(marked.has(text), `${page}:${i + 1} shows an output without an <!-- output: NAME --> marker: ${text}`);
      });
    }
    assert.ok(blocks.length >= 8, `found ${blocks.length} marked blocks`);
  });

  it('each marked block has the shape of its real run', (t) => {
    const failures: string[] = [];
    // The timing fixture's 40 ms delay shows as a finding only when the machine is not swamped; when the
    // run found no route over budget the machine was (the exit status was checked against that verdict),
    // and the blocks of that run say nothing about drift.
    const swamped = (name: string) => name === TIMING_RUN && !/OVER BUDGET/.test(real[name] ?? '');
    for (const block of blocks) {
      const output = real[block.name];
      if (output === undefined) {
        failures.push(`${block.page}:${block.line}: no run is named '${block.name}' (runs: ${Object.keys(real).join(', ')})`);
        continue;
      }
      if (swamped(block.name)) {
        t.diagnostic(`${block.page}:${block.line} not checked: the timing run found no route over budget (a loaded machine)`);
        continue;
      }
      const mismatch = shapeMismatch(block.lines, realLines(output, cwd));
      if (mismatch) failures.push(`${block.page}:${block.line} (${block.name}) drifted from the real output, ${mismatch}`);
    }
    assert.deepEqual(failures, [], failures.join('\n\n'));
  });
});
