// bb shadow over HTTP/2: a real @grpc/grpc-js client (h2c) through the real
// bb binary in front of two builds of a grpc-js server (the new build changes
// one field of one server-stream message), and a node:http2 client's h2c GET.
// The client's transcript equals the primary's alone; each call reaches the
// candidate and the secondary over h2c (unary, server, and bidi streaming:
// the bidi call's messages reach the targets as they cross); the changed
// message is one regression, and bb diff of the captures agrees. gRPC calls
// go as POST: not mirrored by default (unsafe), mirrored when opted in.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import type { ShadowReport } from '../../../scenario/index.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { runBb, startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { itemMethod, itemsHandlers, type ItemValue } from '../../helpers/grpc-items.js';
import { createLeafFactory, loadOrCreateCa, type LeafFactory } from '../../../proxy/tls/index.js';

/** A TLS server's key and certificate chain (PEM). */
type LeafPem = Awaited<ReturnType<LeafFactory['pemFor']>>;

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

const SERVICE = {
  get: itemMethod('/demo.Items/Get', false, false),
  list: itemMethod('/demo.Items/List', false, true),
  chat: itemMethod('/demo.Items/Chat', true, true),
} as const;

/** A build of the service on 127.0.0.1:0 (with `tls`, over TLS as https://localhost): the new one names List's second item differently. Counts calls per path and Chat's messages. */
async function grpcBuild(build: 'old' | 'new', tls?: LeafPem): Promise<{ url: string; calls: Map<string, number>; chat: string[] }> {
  const calls = new Map<string, number>();
  const chat: string[] = [];
  const note = (call: { getPath(): string }) => calls.set(call.getPath(), (calls.get(call.getPath()) ?? 0) + 1);
  const server = new grpc.Server();
  server.addService(SERVICE as unknown as grpc.ServiceDefinition, {
    ...itemsHandlers({ onCall: note, chat, itemName: (i) => (build === 'new' && i === 1 ? `thing ${i}` : `item ${i}`) }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', tls ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(tls.keyPem), cert_chain: Buffer.from(tls.chainPem) }]) : grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  return { url: tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`, calls, chat };
}

type Items = Record<string, (...a: unknown[]) => any> & grpc.Client;

/** Get, List (3 items) and a Chat of two messages (the second sent once the first echo came) through `url` (https: trusting `ca`); what the client saw. */
async function drive(url: string, ca?: string): Promise<unknown[]> {
  const Client = grpc.makeGenericClientConstructor(SERVICE as unknown as grpc.ServiceDefinition, 'Items');
  const client = new Client(new URL(url).host, ca ? grpc.credentials.createSsl(Buffer.from(ca)) : grpc.credentials.createInsecure()) as unknown as Items;
  const seen: unknown[] = [];
  try {
    seen.push(await new Promise((resolve, reject) => client.get!({ name: 'a', n: 2 }, (err: Error | null, v: ItemValue) => (err ? reject(err) : resolve(v)))));
    seen.push(
      await new Promise((resolve, reject) => {
        const items: ItemValue[] = [];
        const call = client.list!({ name: 'all', n: 3 }) as grpc.ClientReadableStream<ItemValue>;
        call.on('data', (m: ItemValue) => items.push(m));
        call.on('error', reject);
        call.on('end', () => resolve(items));
      }),
    );
    seen.push(
      await new Promise((resolve, reject) => {
        const echoes: ItemValue[] = [];
        const call = client.chat!() as grpc.ClientDuplexStream<ItemValue, ItemValue>;
        call.on('data', (m: ItemValue) => {
          echoes.push(m);
          if (echoes.length === 1) {
            call.write({ name: 'second', n: 2 });
            call.end();
          }
        });
        call.on('error', reject);
        call.on('end', () => resolve(echoes));
        call.write({ name: 'first', n: 1 });
      }),
    );
  } finally {
    client.close();
  }
  return seen;
}

/** An h2c server answering GET /hello, counting requests. */
async function h2cServer(): Promise<{ url: string; hits: { n: number } }> {
  const hits = { n: 0 };
  const server = http2.createServer((req, res) => {
    hits.n++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ hello: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

describe('bb shadow over HTTP/2 and gRPC', () => {
  it('mirrors gRPC calls over h2c when opted in: the client sees the primary only, the changed stream message is one regression, bb diff agrees', async () => {
    const [primary, candidate, secondary] = [await grpcBuild('old'), await grpcBuild('new'), await grpcBuild('old')];
    const out = tmp.path('grpc');
    const json = tmp.path('grpc.json');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', out, '--json', json, '--mirror', 'all', '--until', '3'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const seen = await drive(url!);
    // The transcript is the primary's alone: the same calls straight to the primary.
    assert.deepEqual(seen, await drive(primary.url));
    const code = await bb.exited;
    assert.equal(code, 1, `exit 1 on the regression\n${bb.stdout()}\n${bb.stderr()}`);
    for (const t of [candidate, secondary]) {
      assert.deepEqual(Object.fromEntries(t.calls), { '/demo.Items/Get': 1, '/demo.Items/List': 1, '/demo.Items/Chat': 1 });
      assert.deepEqual(t.chat, ['first', 'second']);
    }
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.requests, 3, JSON.stringify(report.totals));
    assert.equal(report.totals.mirrored, 3, JSON.stringify(report.totals));
    assert.equal(report.totals.errors, 0, JSON.stringify(report.totals));
    assert.equal(report.totals.regressions, 1, JSON.stringify(report.findings));
    assert.equal(report.findings.length, 1, JSON.stringify(report.findings));
    assert.equal(report.findings[0]!.class, 'regression');

    const diff = await runBb(['diff', `${out}/primary.har`, `${out}/candidate.har`, '--noise', `${out}/secondary.har`, '--json', '-'], env);
    assert.equal(diff.code, 1, diff.stderr);
    const result = JSON.parse(diff.stdout) as { findings: Array<{ class: string; kind: string; pattern: string }>; pairs: unknown[] };
    const offline = result.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`);
    assert.deepEqual(offline, report.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern}`));
    assert.equal(result.pairs.length, 3);
  });

  it('over TLS too (h2 by ALPN): https targets trusted with --upstream-ca, clients on TLS with --listen-tls; the transcript is the primary\'s, the changed message one regression', async () => {
    const ca = await loadOrCreateCa(tmp.path('targets-ca'));
    const leaf = await createLeafFactory(ca).pemFor('localhost');
    const caFile = await tmp.write('targets-ca.pem', ca.certPem);
    const [primary, candidate, secondary] = [await grpcBuild('old', leaf), await grpcBuild('new', leaf), await grpcBuild('old', leaf)];
    const json = tmp.path('grpc-tls.json');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--upstream-ca', caFile, '--listen-tls', '--out', tmp.path('grpc-tls'), '--json', json, '--mirror', 'all', '--until', '3'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (https:\/\/\S+)/, 20_000);
    // bb's own CA signs the leaf its clients see (as bb capture --listen-tls); the run names it (asserted once bb
    // has exited: stderr's line may reach the test after stdout's).
    const bbCa = await readFile(`${tmp.bbHome}/ca.pem`, 'utf8');
    const seen = await drive(url!.replace('127.0.0.1', 'localhost'), bbCa);
    assert.deepEqual(seen, await drive(primary.url, ca.certPem));
    assert.equal(await bb.exited, 1, `exit 1 on the regression\n${bb.stdout()}\n${bb.stderr()}`);
    assert.match(bb.stderr(), new RegExp(`clients trust ${tmp.bbHome}/ca\\.pem`));
    for (const t of [candidate, secondary]) assert.deepEqual(Object.fromEntries(t.calls), { '/demo.Items/Get': 1, '/demo.Items/List': 1, '/demo.Items/Chat': 1 });
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.deepEqual([report.totals.mirrored, report.totals.errors, report.totals.regressions], [3, 0, 1], JSON.stringify(report));
    // Each capture names its https target, its entries h2 (the mirrors reach each target's recording proxy over h2c, which speaks h2 over TLS on).
    for (const [side, target] of [['primary', primary], ['candidate', candidate], ['secondary', secondary]] as const) {
      const har = JSON.parse(await readFile(`${tmp.path('grpc-tls')}/${side}.har`, 'utf8')) as { log: { _bb: { target: string }; entries: Array<{ request: { httpVersion: string } }> } };
      assert.equal(har.log._bb.target, target.url, side);
      assert.deepEqual(har.log.entries.map((e) => e.request.httpVersion), Array(3).fill('HTTP/2.0'), side);
    }
    const diff = await runBb(['diff', `${tmp.path('grpc-tls')}/primary.har`, `${tmp.path('grpc-tls')}/candidate.har`, '--noise', `${tmp.path('grpc-tls')}/secondary.har`, '--json', '-'], env);
    assert.equal(diff.code, 1, diff.stderr);
    const offline = (JSON.parse(diff.stdout) as { findings: Array<{ class: string; kind: string; pattern: string }> }).findings.filter((f) => f.class !== 'known');
    assert.deepEqual(offline.map((f) => `${f.kind} ${f.pattern}`), report.findings.map((f) => `${f.kind} ${f.pattern}`));
  });

  it('gRPC calls are POST: by default not mirrored (skipped: unsafe); one route opted in is', async () => {
    const [primary, candidate] = [await grpcBuild('old'), await grpcBuild('new')];
    const json = tmp.path('optin.json');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', tmp.path('optin'), '--json', json, '--mirror', 'POST /demo.Items/Get', '--until', '3'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    await drive(url!);
    assert.equal(await bb.exited, 0, bb.stderr());
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.mirrored, 1, JSON.stringify(report.totals));
    assert.deepEqual(report.totals.skipped, { unsafe: 2 });
    assert.deepEqual(Object.fromEntries(candidate.calls), { '/demo.Items/Get': 1 });
  });

  it('an h2c GET from node:http2 is mirrored over h2c and equal', async () => {
    const [primary, candidate] = [await h2cServer(), await h2cServer()];
    const json = tmp.path('get.json');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', tmp.path('get'), '--json', json, '--until', '2'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const session = http2.connect(url!);
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const req = session.request({ ':path': path });
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => resolve(body));
        req.on('error', reject);
      });
    try {
      assert.deepEqual(await Promise.all([get('/hello'), get('/hello?x=1')]), ['{"hello":"/hello"}', '{"hello":"/hello?x=1"}']);
    } finally {
      session.close();
    }
    assert.equal(await bb.exited, 0, bb.stderr());
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.mirrored, 2, JSON.stringify(report.totals));
    assert.equal(report.totals.equal, 2, JSON.stringify(report.totals));
    assert.equal(candidate.hits.n, 2);
    const har = JSON.parse(await readFile(`${tmp.path('get')}/candidate.har`, 'utf8')) as { log: { entries: Array<{ request: { httpVersion: string } }> } };
    assert.deepEqual(har.log.entries.map((e) => e.request.httpVersion), ['HTTP/2.0', 'HTTP/2.0']);
  });
});
