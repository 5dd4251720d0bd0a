// bb replay of an HTTP/2 capture goes over HTTP/2: h2c with prior knowledge
// to an http:// target, h2 by ALPN to an https:// one (its certificate
// trusted as for any https replay: Node's roots and NODE_EXTRA_CA_CERTS).
// The streams of one original connection share one replay connection, and
// streams that overlapped overlap again. The capture is made by a node:http2
// client through bb's proxy in front of an h2c server, which makes up the ids
// the replay must follow; bb diff of the two captures is MATCH.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { startRecording } from '../../../scenario/index.js';
import { localhostCert } from '../../helpers/localhost-cert.js';
import type { Har } from '../../../capture/index.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** What an h2 target saw. */
interface H2Target {
  url: string;
  /** Per connection: the protocol (h2c or h2) and the streams' "METHOD path status", in arrival order. */
  sessions: Array<{ protocol: string; streams: string[] }>;
  /** The headers of each request, as received (names in order, pseudo-headers included). */
  heads: Array<[string, string][]>;
  /** Request trailers received, per request with any. */
  trailers: Array<Record<string, unknown>>;
  /** Most streams in flight at once. */
  maxInFlight(): number;
}

/** An h2 server (h2c, or TLS with `tls`) that makes up item ids: POST /items, GET /items/:id (404 for an id it never made), GET /slow (300 ms). */
async function h2Target(tls?: { key: string; cert: string }): Promise<H2Target> {
  const items = new Map<string, string>();
  const sessions: H2Target['sessions'] = [];
  const of = new WeakMap<http2.ServerHttp2Session, number>();
  const heads: H2Target['heads'] = [];
  const trailers: H2Target['trailers'] = [];
  let inFlight = 0;
  let max = 0;
  const server = tls ? http2.createSecureServer({ key: tls.key, cert: tls.cert }) : http2.createServer();
  server.on('session', (s) => {
    of.set(s, sessions.length);
    sessions.push({ protocol: String(s.alpnProtocol), streams: [] });
  });
  server.on('stream', (stream, headers, _flags, raw) => {
    const pairs: [string, string][] = [];
    for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
    heads.push(pairs);
    inFlight++;
    max = Math.max(max, inFlight);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('trailers', (t) => trailers.push({ ...t }));
    stream.on('end', () => {
      const path = String(headers[':path']);
      const method = String(headers[':method']);
      const answer = (status: number, body: unknown) => {
        inFlight--;
        sessions[of.get(stream.session!)!]!.streams.push(`${method} ${path} ${status}`);
        stream.respond({ ':status': status, 'content-type': 'application/json' });
        stream.end(JSON.stringify(body));
      };
      if (method === 'POST' && path === '/items') {
        const id = randomUUID();
        items.set(id, JSON.parse(Buffer.concat(chunks).toString()).name);
        answer(201, { id });
      } else if (path.startsWith('/items/')) {
        const id = path.slice('/items/'.length);
        if (items.has(id)) answer(200, { id, name: items.get(id) });
        else answer(404, { error: 'no such item' });
      } else if (path.startsWith('/slow')) setTimeout(() => answer(200, { slow: path }), 300);
      else answer(404, { error: 'no such route' });
    });
  });
  const open = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    for (const s of open) s.destroy();
    await new Promise((r) => server.close(r));
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `${tls ? 'https://localhost' : 'http://127.0.0.1'}:${port}`, sessions, heads, trailers, maxInFlight: () => max };
}

/** One request on an h2 session: status and body. */
function request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString() }));
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

describe('bb replay: HTTP/2', () => {
  let original: string;
  before(async () => {
    const first = await h2Target();
    const rec = await startRecording({ target: first.url, out: tmp.path('h2.har'), label: 'h2', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const session = http2.connect(rec.url);
    try {
      const created = await request(session, { ':method': 'POST', ':path': '/items', 'content-type': 'application/json', 'x-trace': 'abc' }, JSON.stringify({ name: 'one' }));
      const { id } = JSON.parse(created.body) as { id: string };
      assert.equal((await request(session, { ':path': `/items/${id}`, 'x-trace': 'def' })).status, 200);
      // Two streams at once on the one connection.
      await Promise.all([request(session, { ':path': '/slow?n=1' }), request(session, { ':path': '/slow?n=2' })]);
    } finally {
      session.close();
    }
    original = await rec.close(1000);
    const har = JSON.parse(await readFile(original, 'utf8')) as Har;
    assert.ok(har.log.entries.every((e) => e.request.httpVersion === 'HTTP/2.0'));
  });

  it('goes over h2c to an http:// target: one connection, the id followed, the slow streams concurrent; bb diff is MATCH', async () => {
    const target = await h2Target();
    const out = tmp.path('h2c-replay.har');
    const run = await runBb(['replay', original, '--target', target.url, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    // bb's check that the target is up is a connection too, without a stream.
    const used = target.sessions.filter((s) => s.streams.length > 0);
    assert.deepEqual(used.map((s) => s.protocol), ['h2c']);
    const streams = used[0]!.streams;
    assert.equal(streams.length, 4, streams.join('\n'));
    assert.deepEqual(streams.slice(0, 2).map((s) => s.replace(/[0-9a-f-]{36}/, 'ID')), ['POST /items 201', 'GET /items/ID 200']);
    assert.equal(target.maxInFlight(), 2);
    // The head as recorded: the client's own header, no connection header (h2 has none).
    const created = target.heads[0]!;
    assert.deepEqual(created.filter(([n]) => n.startsWith(':')).map(([n]) => n).sort(), [':authority', ':method', ':path', ':scheme']);
    assert.equal(created.find(([n]) => n === ':authority')![1], new URL(target.url).host);
    assert.ok(created.some(([n, v]) => n === 'x-trace' && v === 'abc'));
    const replayed = JSON.parse(await readFile(out, 'utf8')) as Har;
    assert.ok(replayed.log.entries.every((e) => e.request.httpVersion === 'HTTP/2.0'));
    assert.equal(new Set(replayed.log.entries.map((e) => e.connection)).size, 1);
    const diff = await runBb(['diff', original, out], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });

  it('sends an h2 request\'s trailers after its body', async () => {
    const first = await h2Target();
    const rec = await startRecording({ target: first.url, out: tmp.path('trailers.har'), label: 'trailers', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const session = http2.connect(rec.url);
    await new Promise<void>((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': '/slow?t=1' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc123' }));
      stream.on('data', () => {});
      stream.on('end', () => resolve());
      stream.on('error', reject);
      stream.end('body');
    });
    session.close();
    const recorded = await rec.close(1000);
    const target = await h2Target();
    const run = await runBb(['replay', recorded, '--target', target.url, '--out', tmp.path('trailers-replay.har')], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(target.trailers.map((t) => t['x-checksum']), ['abc123']);
  });

  it('falls back to HTTP/1.1 for a target that does not speak HTTP/2, and says so', async () => {
    const paths: string[] = [];
    const server = http.createServer((req, res) => {
      paths.push(`${req.method} ${req.url} HTTP/${req.httpVersion}`);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    const out = tmp.path('h1-replay.har');
    const run = await runBb(['replay', original, '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(run.stderr, /^bb replay: the target does not speak HTTP\/2: 4 exchanges recorded over HTTP\/2 went as HTTP\/1\.1$/m);
    assert.equal(paths.length, 4);
    assert.ok(paths.every((p) => p.endsWith('HTTP/1.1')), paths.join('\n'));
    // One exchange is one, not "1 exchanges".
    const har = JSON.parse(await readFile(original, 'utf8')) as Har;
    const one = tmp.path('one-h2.har');
    await writeFile(one, JSON.stringify({ log: { ...har.log, entries: har.log.entries.slice(0, 1) } }));
    const single = await runBb(['replay', one, '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', tmp.path('one-h1-replay.har')], env);
    assert.equal(single.code, 0, single.stderr + single.stdout);
    assert.match(single.stderr, /^bb replay: the target does not speak HTTP\/2: 1 exchange recorded over HTTP\/2 went as HTTP\/1\.1$/m);
  });

  it('goes over h2 by ALPN to an https:// target, its certificate trusted through NODE_EXTRA_CA_CERTS', async () => {
    const { key, cert, caFile } = await localhostCert(tmp.path('target-ca'));
    const target = await h2Target({ key, cert });
    const out = tmp.path('tls-replay.har');
    const run = await runBb(['replay', original, '--target', target.url, '--out', out], { ...env, NODE_EXTRA_CA_CERTS: caFile });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    // bb's check that the target is up, trusted and speaks h2 is a connection too, without a stream.
    const used = target.sessions.filter((s) => s.streams.length > 0);
    assert.deepEqual(used.map((s) => s.protocol), ['h2']);
    assert.equal(used[0]!.streams.length, 4);
    assert.match(used[0]!.streams[1]!, /^GET \/items\/[0-9a-f-]{36} 200$/);
    assert.equal(target.heads[0]!.find(([n]) => n === ':scheme')![1], 'https');
  });

  it('--upstream-ca FILE trusts the target\'s CA; without it, a target bb cannot verify is refused in one line (exit 2) before anything is sent', async () => {
    const { key, cert, caFile } = await localhostCert(tmp.path('target-ca-2'));
    const target = await h2Target({ key, cert });
    const noExtra = { ...env, NODE_EXTRA_CA_CERTS: '' };
    const refused = await runBb(['replay', original, '--target', target.url, '--out', tmp.path('untrusted.har')], noExtra);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /the target https:\/\/localhost:\d+ has a certificate bb cannot verify \(SELF_SIGNED_CERT_IN_CHAIN\): trust the upstream's CA with --upstream-ca FILE, or skip verification with --insecure-upstream\. Nothing was sent\./);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.equal(target.sessions.reduce((n, s) => n + s.streams.length, 0), 0);
    assert.ok(!existsSync(tmp.path('untrusted.har')));
    const out = tmp.path('trusted.har');
    const run = await runBb(['replay', original, '--target', target.url, '--out', out, '--upstream-ca', caFile], noExtra);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal(target.sessions.reduce((n, s) => n + s.streams.length, 0), 4);
    const diff = await runBb(['diff', original, out], env);
    assert.match(diff.stdout, /^MATCH/, diff.stdout + diff.stderr);
    // --insecure-upstream: no verification, said by its name.
    const insecure = await runBb(['replay', original, '--target', target.url, '--out', tmp.path('insecure.har'), '--insecure-upstream'], noExtra);
    assert.equal(insecure.code, 0, insecure.stderr + insecure.stdout);
  });
});
