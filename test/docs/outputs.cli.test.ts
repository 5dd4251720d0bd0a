// Every command output shown in README.md and docs/*.md comes from a real
// run of this build and keeps its shape (test/docs/output-shape.ts says the
// rule and the marker). The runs are few and shared: one `bb demo` (its
// capture is then replayed), one `bb compare --repeat 3` for the timing
// blocks, one recorded upgrade pair diffed once, one live log against an
// https server bb does not trust, one route retired behind a 404 page, four
// `bb shadow` runs (one shown, two zones merged, one rotating), one ratification and the
// diff after it. They run side by side in one before().
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
import { Client } from 'undici';
import { startShadowService } from '../scenario/shadow/service.js';
import { capture as harOf, type ExchangeSpec } from '../helpers/har.js';
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

/** A run's output followed by its exit status (what `$ echo $?` under a shown block prints). */
const withStatus = (output: string, code: number): string => `${output.replace(/\n$/, '')}\n${code}\n`;

/**
 * Old, new and old builds of the shadow service (test/scenario/shadow/service.ts) behind `bb shadow`, stdout and stderr merged;
 * `drive` is the client; `more` adds flags and runs it in a folder of its own under the test's (relative to it).
 */
async function shadowRun(name: string, requests: number, drive: (url: string) => Promise<void>, more: { args?: string[]; dir?: string } = {}): Promise<{ output: string; json: string }> {
  const builds = await Promise.all((['old', 'new', 'old'] as const).map((b) => startShadowService(b)));
  closers.push(...builds.map((b) => () => b.close()));
  const [primary, candidate, secondary] = builds.map((b) => b.url);
  const json = `${name}.json`;
  const dir = more.dir ? join(cwd, more.dir) : cwd;
  if (more.dir) await mkdir(dir, { recursive: true });
  const args = ['shadow', '--primary', primary!, '--candidate', candidate!, '--secondary', secondary!, '--out', `captures/${name}`, '--json', json, '--until', String(requests), ...(more.args ?? [])];
  const bb = startBb(args, env, { ...merged, cwd: dir, timeoutMs: 60_000 });
  const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
  await drive(url!);
  const code = await bb.exited;
  assert.equal(code, 1, bb.stdout());
  return { output: withStatus(bb.stdout(), code), json };
}

/** `bb shadow` as docs/shadow.md shows it (9 requests on one connection, one a POST), and two zones' runs merged as docs/shadow-fleet.md shows them. */
async function shadow(): Promise<Record<string, string>> {
  // One connection, as a browser's keep-alive: bb shadow mirrors each client connection's requests in their order.
  const client = async (url: string, drive: (get: (path: string, headers?: Record<string, string>) => Promise<{ headers: Record<string, unknown>; body: string }>, c: Client) => Promise<void>) => {
    const c = new Client(url);
    try {
      await drive(async (path, headers = {}) => {
        const res = await c.request({ method: 'GET', path, headers });
        return { headers: res.headers, body: await res.body.text() };
      }, c);
    } finally {
      await c.close();
    }
  };
  const one = await shadowRun('shadow', 9, (url) => client(url, async (get, c) => {
    const cookie = String((await get('/session')).headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 3; i++) {
      const list = JSON.parse((await get('/items')).body) as { items: Array<{ id: string }> };
      await get(`/items/${list.items[0]!.id}`);
    }
    await get('/me', { cookie });
    await (await c.request({ method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' })).body.text();
  }));
  const zone = (name: string, n: number) => shadowRun(name, n, (url) => client(url, async (get) => {
    for (let i = 0; i < n; i++) await get('/items?page=0');
  }));
  const [a, b] = [await zone('zone-a', 5), await zone('zone-b', 3)];
  const merge = await runBb(['shadow', '--merge', a.json, b.json, '--json', 'fleet.json'], env, merged);
  // Rotating by a size any exchange passes: the run is cut into segments (how many depends on when the journal's size
  // is read), each said on its own line. In a folder of its own, so its captures/shadow is not the shown run's.
  const rotating = await shadowRun('shadow', 4, (url) => client(url, async (get) => {
    for (let i = 0; i < 4; i++) await get('/items');
  }), { args: ['--rotate', '1B'], dir: 'rotate' });
  return { 'bb shadow': one.output, 'bb shadow --merge': withStatus(merge.stdout, merge.code), 'bb shadow --rotate': rotating.output };
}

/** `bb known add --all` ratifies a create's 201 → 200, then `bb diff` of a capture where it answers 500 says what was ratified (docs/diff.md). */
async function ratified(): Promise<Record<string, string>> {
  const api = (created: number): ExchangeSpec[] => [
    { method: 'POST', url: 'http://127.0.0.1:1/items', requestBody: { name: 'x' }, status: created, body: { ok: true } },
    { url: 'http://127.0.0.1:1/items/1', body: { name: 'a' } },
  ];
  // A folder of its own: the upgrade pair writes an old.har of its own beside the others.
  const dir = join(cwd, 'ratify');
  await mkdir(dir);
  for (const [file, created] of [['old.har', 201], ['new.har', 200], ['regressed.har', 500]] as const) await writeFile(join(dir, file), JSON.stringify(harOf(api(created))));
  const first = await runBb(['diff', 'old.har', 'new.har', '--json', 'report.json'], env, { cwd: dir });
  assert.equal(first.code, 1, first.stdout + first.stderr);
  const add = await runBb(['known', 'add', '--all', '--from', 'report.json', '--reason', 'creates answer 200'], env, { ...merged, cwd: dir });
  assert.equal(add.code, 0, add.stdout);
  const diff = await runBb(['diff', 'old.har', 'regressed.har', '--config', 'bb.config.json'], env, { ...merged, cwd: dir });
  assert.equal(diff.code, 1, diff.stdout);
  return { 'bb known add, then bb diff': add.stdout + diff.stdout };
}

/** `bb frames` of a gRPC call whose answer holds a nested message and a repeated field (docs/frames-and-show.md). */
async function grpcFrames(): Promise<Record<string, string>> {
  const har = harOf([{ url: 'http://127.0.0.1:1/demo.Echo/Get', method: 'POST', mime: 'application/grpc-web+proto', body: '' }]);
  const entry = har.log.entries[0]!;
  const at = Date.parse(entry.startedDateTime) / 1000;
  const text = (field: number, s: string) => Buffer.concat([Buffer.from([(field << 3) | 2, s.length]), Buffer.from(s)]);
  const inner = Buffer.concat([text(1, 'deep note'), Buffer.from([0x10, 7])]);
  // { 1: "got a", 2: 42, 3: { 1: "deep note", 2: 7 }, 4: "a-tag", 4: "b-tag" }, hand-encoded (38 bytes).
  const message = Buffer.concat([text(1, 'got a'), Buffer.from([0x10, 42, 0x1a, inner.length]), inner, text(4, 'a-tag'), text(4, 'b-tag')]);
  entry._grpcMessages = [
    { type: 'send', time: at + 0.001, compressed: false, data: text(1, 'a').toString('base64'), _bb: { seq: 11 } },
    { type: 'receive', time: at + 0.004, compressed: false, data: message.toString('base64'), _bb: { seq: 12 } },
  ];
  entry._bb!.grpc = { status: 0 };
  await writeFile(join(cwd, 'grpc.har'), JSON.stringify(har));
  const frames = await runBb(['frames', 'grpc.har'], env, { cwd });
  assert.equal(frames.code, 0, frames.stderr);
  return { 'bb frames (a gRPC call)': frames.stdout };
}

describe('the outputs shown in the docs', () => {
  let real: Record<string, string> = {};
  before(async () => {
    const runs = await Promise.all([demoAndReplay(), timing(), upgradePair(), untrustedUpstream(), retiredRoute(), shadow(), ratified(), grpcFrames()]);
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
    // A command continued onto more lines (a trailing backslash) is shown, not compared.
    assert.equal(shapeMismatch(['$ bb x \\', '    --flag y', 'b 2'], real), undefined);
    assert.match(shapeMismatch(['$ bb x', '    --flag y', 'b 2'], real) ?? '', /line 1 of the block/);
    assert.match(shapeMismatch(['a 1', 'c 3'], real) ?? '', /line 2 of the block/);
    assert.match(shapeMismatch(['b 1', 'x'], real) ?? '', /shown: x\n {2}real: {2}c N/);
  });

  it('leaves out the run folder and the notice a busy machine adds to a shadow run, nothing else', () => {
    const out = '/run/dir/x.har\nthe comparison worker got too little CPU at the end (other processes keep the cores busy): a fresh worker compared the journals whole\ncaptures: /run/dir/p.har\nthe comparison worker said hello\n';
    assert.deepEqual(realLines(out, '/run/dir'), ['x.har', 'captures: p.har', 'the comparison worker said hello']);
  });

  it('reads a marked block inside a list item (indented 4 more than its marker)', () => {
    const md = ['- an item:', '', '  <!-- output: x -->', '', '      a 1', '', '      b 2', '', '  more text', '      not this'].join('\n');
    assert.deepEqual(shownBlocks('p.md', md).map((b) => [b.name, b.lines]), [['x', ['a 1', '', 'b 2']]]);
  });

  it('marks every block that shows a command output', () => {
    // Lines only bb prints (a finding's id is F and 9 hex digits): an unmarked block with one is an output nobody checks. A block may sit in a
    // list item (indented further), so lines are compared without their indentation.
    const outputish = /^(DIFF: |MATCH|bb: |bb shadow: |REGRESSIONS|NO REGRESSIONS|added to |replayed |#\d+ (GET|POST)|Timing \(|\[F[0-9a-f]{9}\])/;
    const marked = new Set(blocks.flatMap((b) => b.lines.map((l) => l.trim())));
    for (const page of pages) {
      const lines = readFileSync(join(root, page), 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line.startsWith('    ') && outputish.test(line.trim())) assert.ok(marked.has(line.trim()), `${page}:${i + 1} shows an output without an <!-- output: NAME --> marker: ${line.trim()}`);
      });
    }
    assert.ok(blocks.length >= 8, `found ${blocks.length} marked blocks`);
  });

  it('each marked block has the shape of its real run', (t) => {
    const failures: string[] = [];
    // The timing fixture's 40 ms delay shows as the one finding only when the machine is not swamped; when
    // the run found no route over budget, or another one too, the machine was (the exit status was checked
    // against that verdict), and the blocks of that run say nothing about drift.
    const slowAlone = (text: string) => (text.match(/OVER BUDGET/g) ?? []).length === 1 && /^\s*timing\/GET \/slow .*OVER BUDGET$/m.test(text);
    const swamped = (name: string) => name === TIMING_RUN && !slowAlone(real[name] ?? '');
    for (const block of blocks) {
      const output = real[block.name];
      if (output === undefined) {
        failures.push(`${block.page}:${block.line}: no run is named '${block.name}' (runs: ${Object.keys(real).join(', ')})`);
        continue;
      }
      if (swamped(block.name)) {
        t.diagnostic(`${block.page}:${block.line} not checked: the timing run did not find /slow alone over budget (a loaded machine)`);
        continue;
      }
      const mismatch = shapeMismatch(block.lines, realLines(output, cwd));
      if (mismatch) failures.push(`${block.page}:${block.line} (${block.name}) drifted from the real output, ${mismatch}`);
    }
    assert.deepEqual(failures, [], failures.join('\n\n'));
  });
});
