// A real server whose new build replaces one route by a 404 page, recorded
// through bb twice: bb diff reports ONE finding with its consequences under
// it, --rows still lists every row, and `bb known add` of that finding
// ratifies the consequences too, so the next diff is a MATCH. A gRPC call
// that starts failing is one finding too: its grpc.status, with the message,
// headers and response message that follow from it under it.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Cleanups } from '../helpers/cleanups.js';
import { record, get } from '../helpers/recording.js';
import { runBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { retiredRouteApp, RETIRED_ROUTE_CALLS } from '../helpers/retired-route.js';
import * as grpc from '@grpc/grpc-js';
import { diffCaptures, renderText, type DiffResult } from '../../diff/index.js';
import { itemMethod, type ItemValue } from '../helpers/grpc-items.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

describe('a route replaced by a 404 page', () => {
  it('is one finding with its consequences; --rows lists every row; known add of it gives MATCH', async () => {
    const target = await retiredRouteApp();
    cleanups.add(() => target.close());
    const dir = tempDir(cleanups).dir;
    const files: Record<string, string> = {};
    for (const build of ['old', 'new'] as const) {
      target.setBuild(build);
      const rec = await record(cleanups, target.url);
      for (const path of RETIRED_ROUTE_CALLS) await get(rec.port, path);
      const har = await rec.finish();
      files[build] = join(dir, `${build}.har`);
      await writeFile(files[build]!, JSON.stringify(har));
    }
    const report = join(dir, 'report.json');
    const r = await runBb(['diff', files.old!, files.new!, '--json', report]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^DIFF: 1 real finding \(\d+ differences\)/, r.stdout);
    const result = JSON.parse(await readFile(report, 'utf8')) as DiffResult;
    assert.equal(result.findings.length, 1, r.stdout);
    const [f] = result.findings;
    assert.deepEqual([f!.pattern, f!.old, f!.new, f!.entries, f!.routes], ['response.status', 200, 404, 3, ['GET /legacy']]);
    const consequences = f!.consequences!.map((c) => `${c.kind} ${c.pattern}`).sort();
    assert.deepEqual(consequences, [
      'added response.headers.content-security-policy',
      'added response.headers.x-content-type-options',
      'changed response.body',
      'changed response.headers.content-type',
      'removed response.headers.cache-control',
      'removed response.headers.etag',
      'removed response.headers.vary',
      'removed response.headers.x-legacy',
    ], r.stdout);
    // The cause line, then each consequence indented under it.
    assert.match(r.stdout, /\n {2}\[F[0-9a-f]{9}\] response\.status changed 200 → 404 in 3 of 3 GET \/legacy\n( {6}↳ \[F[0-9a-f]{9}\] response\.[^\n]+\n){8} {6}e\.g\. GET \/legacy\?id=1/, r.stdout);
    // Every row is still listed, each under the finding that holds it.
    const rows = await runBb(['diff', files.old!, files.new!, '--rows']);
    assert.equal(rows.code, 1, rows.stderr);
    assert.equal(result.differences.length, f!.rows.length + f!.consequences!.reduce((n, c) => n + c.rows.length, 0));
    for (const d of result.differences) {
      assert.equal(d.finding, f!.id);
      assert.ok(rows.stdout.includes(`[${d.id}]`), `--rows lists ${d.id}:\n${rows.stdout}`);
    }
    // Ratifying the finding ratifies what follows from it.
    const config = join(dir, 'bb.config.json');
    const known = await runBb(['known', 'add', f!.id, '--from', report, '--reason', 'legacy retired in 2.0', '--config', config]);
    assert.equal(known.code, 0, known.stderr);
    assert.equal(known.stdout.split('\n').filter((l) => l.startsWith('added to')).length, 9, known.stdout);
    const again = await runBb(['diff', files.old!, files.new!, '--config', config]);
    assert.equal(again.code, 0, again.stdout);
    assert.match(again.stdout, /^MATCH with 1 known/, again.stdout);
    // Folded to one line, like every known finding; --rows shows what it holds.
    assert.match(again.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.status changed 200 → 404 in 3 of 3 GET \/legacy\n {6}reason: legacy retired in 2\.0\n/, again.stdout);
    const againRows = await runBb(['diff', files.old!, files.new!, '--config', config, '--rows']);
    assert.match(againRows.stdout, /KNOWN-DIFF \[F[0-9a-f]{9}\] response\.status changed 200 → 404[^\n]*\n( {6}↳ [^\n]+\n){8}/, againRows.stdout);
  });
});

describe('a gRPC call that starts failing', () => {
  it('is one finding, its grpc.status, with the message, headers and response message it no longer sent under it', async () => {
    let fail = false;
    const server = new grpc.Server();
    server.addService({ get: itemMethod('/demo.Items/Get', false, false) } as unknown as grpc.ServiceDefinition, {
      get: (call: grpc.ServerUnaryCall<ItemValue, ItemValue>, done: grpc.sendUnaryData<ItemValue>) =>
        fail ? done({ code: grpc.status.NOT_FOUND, details: `no item ${call.request.name}` }) : done(null, { name: `got ${call.request.name}`, n: call.request.n * 2 }),
    });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
    const dir = tempDir(cleanups).dir;
    const files: string[] = [];
    for (const failing of [false, true]) {
      fail = failing;
      const rec = await record(cleanups, `http://127.0.0.1:${port}`);
      const Client = grpc.makeGenericClientConstructor({ get: itemMethod('/demo.Items/Get', false, false) } as unknown as grpc.ServiceDefinition, 'Items');
      const client = new Client(`127.0.0.1:${rec.port}`, grpc.credentials.createInsecure()) as unknown as { get(v: ItemValue, cb: (err: grpc.ServiceError | null) => void): void } & grpc.Client;
      for (const name of ['a', 'b']) await new Promise<void>((resolve) => client.get({ name, n: 1 }, (err) => resolve(assert.equal(err?.code ?? 0, failing ? grpc.status.NOT_FOUND : 0))));
      client.close();
      files.push(join(dir, `${failing}.har`));
      await writeFile(files.at(-1)!, JSON.stringify(await rec.finish()));
    }
    const r = await diffCaptures(files[0]!, files[1]!);
    const text = renderText(r, { color: false, rows: true });
    assert.deepEqual(r.findings.map((f) => `${f.kind} ${f.pattern}`), ['changed grpc.status'], text);
    assert.ok(r.findings[0]!.consequences!.some((c) => c.pattern === 'grpc.message'), text);
    assert.ok(r.findings[0]!.consequences!.some((c) => c.pattern.startsWith('grpc.messages')), text);
    assert.match(text, /\] grpc\.status changed OK \(0\) → NOT_FOUND \(5\) in 2 of 2 POST \/demo\.Items\/Get\n {6}↳ /, text);
    for (const d of r.differences) assert.equal(d.finding, r.findings[0]!.id, text);
  });
});
