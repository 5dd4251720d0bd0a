import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { startShadow } from '../../../scenario/index.js';
import { diffCaptures, pairViewsFrom, renderHtml, validateDiffConfig, type DiffOptions, type DiffStage } from '../../../diff/index.js';
import { createContext, type StoreKind } from '../../../diff/context.js';
import { defaultStages, runStages } from '../../../diff/stages.js';
import { needsBounded } from '../../../diff/store/bounded.js';
import type { Har } from '../../../capture/har.js';
import { CaptureReadError } from '../../../capture/reader.js';
import { capture, uuid } from '../../helpers/har.js';
import { makeZip } from '../zip-builder.js';
import { tempDir } from '../../helpers/tmp.js';
import { isBbError } from '../../../core/index.js';
import { exitStatusFor } from '../../../cli/exit.js';
import { runBb } from '../../helpers/cli.js';

function captures(): { a: Har; b: Har } {
  const ids = Array.from({ length: 6 }, () => uuid());
  const idsB = Array.from({ length: 6 }, () => uuid());
  const a = capture([
    { page: 'login', url: 'http://127.0.0.1:3001/v1/sessions', method: 'POST', requestBody: { user: 'u' }, body: { id: `session_${ids[0]}`, created_at: '2026-01-01T00:00:00Z' } },
    { page: 'login', url: `http://127.0.0.1:3001/v1/sessions/session_${ids[0]}`, body: { id: `session_${ids[0]}`, items: [{ id: ids[1], n: 1 }, { id: ids[2], n: 2 }] } },
    { page: 'work', url: 'http://127.0.0.1:3001/v1/items', body: { items: [ids[3], ids[4]], total: 2 } },
    { page: 'work', url: 'http://127.0.0.1:3001/v1/gone', body: { bye: true } },
    { page: 'work', url: 'http://127.0.0.1:3001/v1/items', body: { items: [ids[4]], total: 1 } },
    { page: 'work', url: 'http://127.0.0.1:3001/ws', ws: [{ type: 'send', data: { type: 'hello', id: ids[5] } }, { type: 'receive', data: { type: 'welcome', id: ids[5] } }, { type: 'receive', data: { type: 'tick', n: 1 } }], close: { code: 1000, reason: '', by: 'client' } },
  ]);
  const b = capture([
    { page: 'login', url: 'http://127.0.0.1:3001/v1/sessions', method: 'POST', requestBody: { user: 'u' }, body: { id: `session_${idsB[0]}`, created_at: '2027-01-01T00:00:00Z' } },
    { page: 'login', url: 'http://127.0.0.1:3001/v1/extra', body: { hi: 1 } },
    { page: 'login', url: `http://127.0.0.1:3001/v1/sessions/session_${idsB[0]}`, body: { id: `session_${idsB[0]}`, items: [{ id: idsB[1], n: 1 }, { id: idsB[2], n: 3 }] } },
    { page: 'working', url: 'http://127.0.0.1:3001/v1/items', body: { items: [idsB[3], idsB[4]], total: 2 } },
    { page: 'working', url: 'http://127.0.0.1:3001/v1/items', body: { items: [idsB[3]], total: 1 } },
    { page: 'working', url: 'http://127.0.0.1:3001/ws', ws: [{ type: 'send', data: { type: 'hello', id: idsB[5] } }, { type: 'receive', data: { type: 'tick', n: 1 } }, { type: 'receive', data: { type: 'welcome', id: idsB[5] } }], close: { code: 1001, reason: 'away', by: 'server' } },
    { page: 'working', url: 'http://127.0.0.1:3001/export', body: 'x' },
  ]);
  const zip = makeZip([{ name: 'session.json', data: JSON.stringify({ id: idsB[0], v: 2 }) }, { name: 'notes.md', data: '# hi' }]);
  Object.assign(b.log.entries.at(-1)!.response.content, { mimeType: 'application/zip', text: zip.toString('base64'), encoding: 'base64' });
  return { a, b };
}

/**
 * The primary's and the candidate's captures of a real `bb shadow` run: GET /x/0, POST /x/1 (not mirrored), GET /x/2,
 * GET /x/3; each server answers its build's name and the path.
 */
async function shadowCaptures(dir: ReturnType<typeof tempDir>, candidateBuild: string): Promise<[string, string]> {
  const servers: http.Server[] = [];
  const serve = (v: string) =>
    new Promise<string>((resolve) => {
      const server = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ v, path: req.url })));
      servers.push(server);
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    });
  try {
    const shadow = await startShadow({ primary: await serve('old'), candidate: await serve(candidateBuild), outDir: dir.path('shadow'), bbHome: dir.bbHome });
    // A POST between the GETs is not mirrored: the candidate's capture numbers its entries apart from the shared ids.
    for (const [i, method] of ['GET', 'POST', 'GET', 'GET'].entries()) await (await fetch(`${shadow.url}/x/${i}`, { method })).text();
    await shadow.close();
  } finally {
    for (const server of servers) server.close();
  }
  return [dir.path('shadow/primary.har'), dir.path('shadow/candidate.har')];
}

describe('the bounded store (captures of any size)', () => {

  const configs: Array<[string, DiffOptions]> = [
    ['no config', {}],
    ['path rules, known entries, header order', {
      headerOrder: true,
      config: validateDiffConfig({
        normalize: { paths: [{ where: '*/GET /v1/items#*', path: 'total', replace: '<N>' }] },
        known: [{ where: '*/GET /v1/sessions/*', path: 'items[].n', reason: 'n is computed differently now' }, { where: '*/GET /nothing*', path: 'x', reason: 'stale' }],
      }),
    }],
  ];
  for (const [name, given] of configs) {
    it(`gives the same result as the in-memory store (${name})`, async () => {
      const dir = tempDir();
      const { a, b } = captures();
      const oldPath = await dir.write('old.har', a);
      const newPath = await dir.write('new.har', b);
      const options: DiffOptions = { ...given, views: true };
      const whole = await runStages(createContext(oldPath, newPath, options, 'memory'), defaultStages);
      const ctx = createContext(oldPath, newPath, options, 'bounded');
      const bounded = await runStages(ctx, defaultStages);
      // Each side in its own worker thread (the default) or in this thread: the same result.
      assert.deepEqual(await runStages(createContext(oldPath, newPath, { ...options, workers: false }, 'bounded'), defaultStages), whole, 'sides in the calling thread');
      assert.ok(whole.differences.length > 5, 'the captures differ in several ways');
      assert.ok(whole.pairs.some((p) => p.status === 'extra') && whole.pairs.some((p) => p.status === 'missing'));
      if (options.config) assert.ok(whole.counts.known > 0 && whole.staleKnown.length === 1, 'classify ran on both');
      assert.deepEqual(bounded, whole);
      assert.ok(whole.pairs.some((p) => p.id === 'work/GET /v1/items#2' && p.status === 'paired'), 'the renamed page pairs by its place');
      // The HTML report gets its side-by-side views from the bounded run too.
      const views = pairViewsFrom(bounded);
      const i = bounded.pairs.findIndex((p) => p.differences > 0 && p.status === 'paired');
      assert.ok(views(i)?.old && views(i)?.new, 'views kept for a differing pair');
      assert.match(await renderHtml(bounded, { views }), /jsondiffpatch-modified/);
    });
  }

  // Two of a shadow's captures are compared in the order of their shared ids, but a pair's `exchange` names each
  // capture's own entry (`#N`: its `_bb.seq`, as bb inspect and bb frames read it). The bounded store named the shared
  // id on both sides, so past the in-memory threshold a candidate's `#5` was another exchange of candidate.har.
  it("gives the same result on two of a shadow's captures: each pair's exchange is its own capture's number", async () => {
    const dir = tempDir();
    const [oldPath, newPath] = await shadowCaptures(dir, 'new');
    const whole = await runStages(createContext(oldPath, newPath, {}, 'memory'), defaultStages);
    const bounded = await runStages(createContext(oldPath, newPath, {}, 'bounded'), defaultStages);
    assert.deepEqual(bounded.pairs, whole.pairs);
    assert.deepEqual(bounded, whole);
    const seqs = (path: string) => new Map((JSON.parse(readFileSync(path, 'utf8')) as Har).log.entries.map((e) => [`#${e._bb!.seq}`, new URL(e.request.url).pathname]));
    const [oldSeqs, newSeqs] = [seqs(oldPath), seqs(newPath)];
    const paired = bounded.pairs.filter((p) => p.status === 'paired');
    assert.equal(paired.length, 3);
    for (const p of paired) {
      const path = p.request!.replace(/^GET /, '');
      assert.equal(oldSeqs.get(p.exchange!.old!), path, `old ${p.exchange!.old} of ${p.request}`);
      assert.equal(newSeqs.get(p.exchange!.new!), path, `new ${p.exchange!.new} of ${p.request}`);
    }
  });

  // A stream whose mirrors bb shadow dropped part-way is tagged skipped in the primary's capture, and in a target's
  // only if its side was still open; one that had ended first keeps its entry untagged. The live comparison leaves
  // that entry; bb diff of the captures listed it as an extra exchange. Both stores now leave it out too.
  it("leaves out a target's entry of an exchange the primary's capture says was not mirrored, on both stores", async () => {
    const dir = tempDir();
    const [oldPath, newPath] = await shadowCaptures(dir, 'old');
    // The primary's capture as the tee leaves it when it drops a mirror part-way: the entry tagged skipped.
    const har = JSON.parse(readFileSync(oldPath, 'utf8')) as Har;
    const dropped = har.log.entries.find((e) => e.request.url.endsWith('/x/2'))!;
    dropped._bb!.shadow = { id: dropped._bb!.shadow!.id, skipped: 'queue full' };
    writeFileSync(oldPath, JSON.stringify(har));
    for (const kind of ['memory', 'bounded'] as const) {
      const result = await runStages(createContext(oldPath, newPath, {}, kind), defaultStages);
      assert.deepEqual(result.pairs.map((p) => [p.route, p.status]), [['GET /x/0', 'paired'], ['GET /x/3', 'paired']], kind);
      assert.equal(result.differences.length, 0, kind);
    }
  });

  it('runs the one stage list, the store being the only difference, and an edit by name reaches both stores', async () => {
    const dir = tempDir();
    const { a, b } = captures();
    const oldPath = await dir.write('old.har', a);
    const newPath = await dir.write('new.har', b);
    assert.deepEqual(defaultStages.map((s) => s.name), ['noise', 'read', 'normalize', 'pair', 'compare', 'timing', 'classify', 'findings', 'verdict']);
    for (const [threshold, kind] of [[undefined, 'memory'], [0, 'bounded']] as Array<[number | undefined, StoreKind]>) {
      const seen: Array<[string, number]> = [];
      const probe: DiffStage = { name: 'probe', run: (ctx) => void seen.push([ctx.storeKind!, ctx.old.store!.summaries.length]) };
      const result = await diffCaptures(oldPath, newPath, { workers: false, ...(threshold !== undefined ? { boundedThreshold: threshold } : {}), stages: (pipe) => void pipe.after('normalize', probe) });
      assert.deepEqual(seen, [[kind, a.log.entries.length]], `the inserted stage ran once, after normalize, in the ${kind} store`);
      assert.equal(result.old.entries, a.log.entries.length);
    }
    await assert.rejects(diffCaptures(oldPath, newPath, { stages: (pipe) => void pipe.before('unzip', defaultStages[0]!) }), /no step 'unzip'/, 'an unknown stage name throws');
  });

  it('reports a side that cannot be read as the in-process read does, and leaves no thread running', async () => {
    const dir = tempDir();
    const { a, b } = captures();
    const good = await dir.write('good.har', a);
    const text = JSON.stringify(b);
    const broken = await dir.write('broken.har', text.slice(0, text.indexOf('"entries"') + 200));
    const missing = `${good}.missing`;
    for (const [oldPath, newPath] of [[good, broken], [missing, good]] as const) {
      const errorOf = async (workers: boolean) => {
        try {
          await runStages(createContext(oldPath, newPath, { workers }, 'bounded'), defaultStages);
        } catch (err) {
          const e = err as Error & { code?: string };
          return { name: e.name, message: e.message, code: e.code, exitStatus: exitStatusFor(e), isBbError: isBbError(e), isCaptureError: e instanceof CaptureReadError };
        }
        assert.fail('the diff ran');
      };
      const inWorkers = await errorOf(true);
      assert.deepEqual(inWorkers, await errorOf(false));
      assert.ok(inWorkers.isBbError, inWorkers.message);
      assert.equal(inWorkers.exitStatus, 2);
      assert.ok(inWorkers.isCaptureError, inWorkers.message);
    }
  });

  it('is chosen by size', async () => {
    const dir = tempDir();
    const { a, b } = captures();
    const oldPath = await dir.write('old.har', a);
    const newPath = await dir.write('new.har', b);
    assert.equal(await needsBounded(oldPath, newPath), false);
    assert.equal(await needsBounded(oldPath, newPath, 100), true);
  });
});

describe('a diff of more entries than one call takes arguments', () => {
  const { write } = tempDir();

  it('compares 30k entries a side on both paths, with a stack small enough that spreading them into one push overflows it', async () => {
    // A 200k-entry diff once died of `ctx.pairs.push(...found.pairs)` (RangeError past ~125k
    // items on the default stack); a 200 KB stack gets the same past ~25k, so 30k shows it here.
    const specs = (tag: string) => Array.from({ length: 30_000 }, (_, i) => ({ url: `http://127.0.0.1:3001/n/${i % 40}`, body: { i, tag: i === 7 ? tag : 'same' } }));
    const oldPath = await write('many-old.har', capture(specs('old')));
    const newPath = await write('many-new.har', capture(specs('new')));
    for (const env of [{}, { BB_DIFF_BOUNDED_BYTES: '0' }]) {
      const run = await runBb(['diff', oldPath, newPath], env, { nodeFlags: ['--stack-size=200'] });
      assert.equal(run.code, 1, `${JSON.stringify(env)}: ${run.stderr.split('\n')[0]}`);
      assert.match(run.stdout, /^DIFF: 1 real finding \(1 difference\)/, JSON.stringify(env));
    }
  });
});

describe('a side too large for a diff thread\'s heap', () => {
  const { write } = tempDir();

  it('stops with one line saying what to do, exit 2 (was: the worker\'s stack as an internal error)', async () => {
    const specs = Array.from({ length: 30_000 }, (_, i) => ({ url: `http://127.0.0.1:3001/n/${i % 40}`, body: { i } }));
    const oldPath = await write('heavy-old.har', capture(specs));
    const newPath = await write('heavy-new.har', capture(specs));
    // A 20 MB heap for every thread: the side's worker reaches it while the main thread waits.
    const run = await runBb(['diff', oldPath, newPath], { BB_DIFF_BOUNDED_BYTES: '0' }, { nodeFlags: ['--max-old-space-size=20'] });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /^bb: reading \S+heavy-(old|new)\.har took a diff thread to Node's heap limit .*NODE_OPTIONS=--max-old-space-size=8192.*\n$/);
    assert.equal(run.stderr.split('\n').length, 2, run.stderr);
  });
});

