// TLS costs of forward mode:
//
//   npm run bench -- tls [--quick] [--rounds N] [--duration S] [--concurrency C]
//
// 1. Leaf issuance: the first leaf for a host (forge TBS + node:crypto
//    signature + SecureContext), a cached one, and — the baseline — the same
//    leaf signed by forge, as a pure-JS signer would.
// 2. TLS handshakes per second: each iteration opens a new connection, does a
//    full handshake (no session resumption), one GET and closes. Direct to
//    the HTTPS server vs through bb's forward proxy (CONNECT, bb's leaf to the
//    client, a verified handshake from bb to the server), rounds alternating
//    so both see the same machine. Everything runs in this one process, so the
//    ratio is what the extra hop costs in CPU per handshake. bb records
//    nothing here (no listener on its facts): this is the TLS cost alone.
import { createPublicKey, createPrivateKey } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import forge from 'node-forge';
import { FactBus } from '../proxy/events.js';
import { startForwardProxy } from '../proxy/forward.js';
import { createLeafFactory, loadOrCreateCa, type Ca } from '../proxy/tls/index.js';
import { buildLeafCertificate } from '../proxy/tls/leaf.js';
import { markdownTable, num, ratio, withSpread, auto } from './lib/table.js';
import { ratios, spread, percentile } from './lib/stats.js';

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

/** Median milliseconds per call of `fn` over `n` calls (after `warm` warm-up calls). */
async function timePerCall(n: number, warm: number, fn: (i: number) => unknown): Promise<number[]> {
  for (let i = 0; i < warm; i++) await fn(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  return samples;
}

async function leafIssuance(ca: Ca, quick: boolean): Promise<void> {
  const n = quick ? 50 : 300;
  const leaves = createLeafFactory(ca, { cacheSize: n + 100 });
  const first = await timePerCall(n, 5, (i) => leaves.contextFor(`h${i + 10}.bench.test`));
  const cached = await timePerCall(n * 10, 10, () => leaves.contextFor('h10.bench.test'));
  // Baseline: the same TBS signed by forge (what building and signing with forge alone costs).
  const keyPem = ca.key.export({ type: 'pkcs1', format: 'pem' }) as string;
  const forgeKey = forge.pki.privateKeyFromPem(keyPem);
  const leafKey = createPrivateKey((await leaves.pemFor('h10.bench.test')).keyPem);
  const publicKey = forge.pki.publicKeyFromPem(createPublicKey(leafKey).export({ type: 'spki', format: 'pem' }) as string);
  const forgeSigned = await timePerCall(quick ? 5 : 20, 1, (i) => {
    const cert = forge.pki.certificateFromPem(buildLeafCertificate(ca, `f${i + 5}.bench.test`, publicKey));
    cert.sign(forgeKey, forge.md.sha256.create());
    return forge.pki.certificateToPem(cert);
  });
  const cryptoOnly = await timePerCall(n, 5, (i) => buildLeafCertificate(ca, `c${i + 10}.bench.test`, publicKey));
  const med = (s: number[]): number => percentile([...s], 50);
  const rows = [
    ['first leaf for a host: build + sign (node:crypto) + SecureContext', `${auto(med(first))} ms`, `${auto(percentile([...first], 95))} ms`],
    ['  of which build + sign (node:crypto)', `${auto(med(cryptoOnly))} ms`, `${auto(percentile([...cryptoOnly], 95))} ms`],
    ['cached leaf (same host again)', `${auto(med(cached) * 1000)} µs`, `${auto(percentile([...cached], 95) * 1000)} µs`],
    ['baseline: build + sign with forge', `${auto(med(forgeSigned))} ms`, `${auto(percentile([...forgeSigned], 95))} ms`],
  ];
  console.log(`\n### Leaf issuance (${n} hosts; RSA-2048, one shared leaf key)\n`);
  console.log(markdownTable(['step', 'median', 'p95'], rows));
  console.log(`\nnode:crypto signing vs forge signing: ${(med(forgeSigned) / med(cryptoOnly)).toFixed(0)}× faster to build and sign a leaf.`);
}

/** Runs `concurrency` loops of `once` for `durationMs`; resolves to completions per second. */
async function perSecond(durationMs: number, concurrency: number, once: () => Promise<void>): Promise<number> {
  const end = performance.now() + durationMs;
  let done = 0;
  let failures = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < end) {
      try {
        await once();
        done++;
      } catch {
        if (++failures > 100) throw new Error('more than 100 failed handshakes: the bench setup is broken');
      }
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return done / ((performance.now() - t) / 1000);
}

/** One GET over an established TLS socket, read to the end. */
function getOver(socket: tls.TLSSocket, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    socket.on('data', (d: Buffer) => (bytes += d.length));
    socket.once('end', () => (bytes > 0 ? resolve() : reject(new Error('empty response'))));
    socket.once('error', reject);
    socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

function handshake(options: tls.ConnectionOptions): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ ...options, ALPNProtocols: ['http/1.1'] }, () => resolve(socket));
    socket.once('error', reject);
  });
}

function connectThrough(proxyPort: number, authority: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: proxyPort, host: '127.0.0.1', noDelay: true }, () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    socket.once('error', reject);
    socket.once('data', (d: Buffer) => {
      if (/^HTTP\/1\.1 200 /.test(d.toString('latin1'))) resolve(socket);
      else reject(new Error(`CONNECT answered ${d.toString('latin1').split('\r\n')[0]}`));
    });
  });
}

async function handshakes(bbCa: Ca, upstreamCa: Ca, args: string[], quick: boolean): Promise<void> {
  const rounds = Number(option(args, '--rounds') ?? (quick ? 1 : 3));
  const durationMs = Number(option(args, '--duration') ?? (quick ? 1 : 3)) * 1000;
  const concurrency = Number(option(args, '--concurrency') ?? 8);
  const upstreamLeaves = createLeafFactory(upstreamCa);
  const pem = await upstreamLeaves.pemFor('localhost');
  const server = https.createServer({ key: pem.keyPem, cert: pem.chainPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const proxy = await startForwardProxy({ ca: bbCa, bus: new FactBus(), upstreamTls: { extraCa: [upstreamCa.certPem] } });
  const host = `localhost:${port}`;
  const direct = async (): Promise<void> => {
    const socket = await handshake({ host: '127.0.0.1', port, servername: 'localhost', ca: [upstreamCa.certPem] });
    await getOver(socket, host);
  };
  const viaBb = async (): Promise<void> => {
    const raw = await connectThrough(proxy.port, host);
    const socket = await handshake({ socket: raw, servername: 'localhost', ca: [bbCa.certPem] });
    await getOver(socket, host);
  };
  try {
    await perSecond(300, 2, direct); // warm up both paths (JIT, the leaf for localhost)
    await perSecond(300, 2, viaBb);
    const directRates: number[] = [];
    const bbRates: number[] = [];
    for (let r = 0; r < rounds; r++) {
      directRates.push(await perSecond(durationMs, concurrency, direct));
      bbRates.push(await perSecond(durationMs, concurrency, viaBb));
    }
    console.log(`\n### TLS handshakes per second (new connection + full handshake + one GET; ${concurrency} in flight, ${rounds} × ${durationMs / 1000} s, one process)\n`);
    console.log(
      markdownTable(
        ['path', 'handshakes/s', 'vs direct'],
        [
          ['direct TLS to the server', withSpread(spread(directRates), (v) => num(v)), '1.00×'],
          ['through bb (CONNECT, bb leaf, verified TLS upstream)', withSpread(spread(bbRates), (v) => num(v)), ratio(spread(ratios(bbRates, directRates)))],
        ],
      ),
    );
    console.log(`\nleaves minted by bb: ${proxy.leaves.stats.issued}, served from cache: ${proxy.leaves.stats.cached}`);
  } finally {
    await proxy.close(100);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** The area's entry point (bench/lib/area.ts calls it). */
export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  console.log('\n## tls');
  const dir = await mkdtemp(join(tmpdir(), 'bb-bench-tls-'));
  try {
    const ca = await loadOrCreateCa(join(dir, 'bb'));
    const upstreamCa = await loadOrCreateCa(join(dir, 'upstream'));
    await leafIssuance(ca, quick);
    await handshakes(ca, upstreamCa, args, quick);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
