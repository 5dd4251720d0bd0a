// Upstreams for ALPN tests: an h2-only server (node:http2) and an
// http/1.1-only one (node:https), both with certificates from their own CA,
// each counting the TLS connections it accepted and what ALPN chose on them.
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { LeafFactory } from '../../../proxy/tls/index.js';

/** A TLS upstream and what it saw. */
export interface AlpnUpstream {
  port: number;
  /** ALPN chosen on each accepted TLS connection, in order (false: none). */
  connections: Array<string | false>;
  close(): Promise<void>;
}

/** An h2-only server (no HTTP/1.1 fallback): answers "h2 <path>" with x-upstream: h2. */
export async function startH2Upstream(leaves: LeafFactory): Promise<AlpnUpstream> {
  const pem = await leaves.pemFor('localhost');
  const connections: Array<string | false> = [];
  const server = http2.createSecureServer({ key: pem.keyPem, cert: pem.chainPem, SNICallback: (name, done) => leaves.contextFor(name).then((ctx) => done(null, ctx), done) });
  server.on('secureConnection', (socket: TLSSocket) => connections.push(socket.alpnProtocol ?? false));
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-upstream': 'h2' });
      stream.end(`h2 ${String(headers[':path'])} ${Buffer.concat(chunks).toString()}`);
    });
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An https server speaking only http/1.1 (Node's default ALPN list): answers "h1 <path>". */
export async function startHttp1Upstream(leaves: LeafFactory): Promise<AlpnUpstream> {
  const pem = await leaves.pemFor('localhost');
  const connections: Array<string | false> = [];
  const server = https.createServer({ key: pem.keyPem, cert: pem.chainPem }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Upstream': 'h1' }).end(`h1 ${req.url}`));
  });
  server.on('secureConnection', (socket: TLSSocket) => connections.push(socket.alpnProtocol ?? false));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
