// Terminating a client's TLS with ALPN mirrored, never translated
// (docs/forward-mode-and-tls.md "ALPN: mirrored, never translated", as
// mitmproxy does): bb reads the client's ClientHello (client-hello.ts),
// connects to the upstream offering exactly the client's ALPN list, and only
// then finishes the client's handshake offering the one protocol the upstream
// chose (h2 ↔ h2, http/1.1 ↔ http/1.1, none ↔ none). The upstream connection
// made on the way is handed to the tap with the decrypted client socket, so the
// server sees one connection per client.
//
// - A ClientHello bb cannot read strictly: terminated as before bb looked
//   (ALPN http/1.1, the tap connects by itself).
// - The upstream refuses every protocol offered (no_application_protocol):
//   the client gets the same alert, as it would from the server itself.
// - Any other upstream failure: the client's handshake still completes
//   (http/1.1 when it offered it, else h2) without an upstream, so the tap
//   answers its 502 and the failure is recorded as an exchange.
// Runs on sockets: forward.ts (CONNECT tunnels) and reverse.ts (--listen-tls) call it.
import tls from 'node:tls';
import type { Socket } from 'node:net';
import { connectUpstream, type Upstream, type UpstreamTlsOptions } from '../upstream.js';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello, type ClientHelloInfo } from './client-hello.js';
import type { LeafFactory } from './leaf.js';

/** The OpenSSL code of the alert a server sends when it shares no ALPN protocol with the client (RFC 7301 §3.2). */
export const NO_APPLICATION_PROTOCOL = 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL';

/** What the client read: a whole ClientHello, or why not (its bytes are put back either way). */
export type ReadHello = { hello: ClientHelloInfo; /** Bytes of the records that held it. */ length: number } | { refused: string } | { closed: true };

/**
 * Reads a client's first TLS records until its ClientHello is whole (it may
 * span several records and TCP segments), bounded in bytes and time, then
 * puts every byte back (unshift) for the TLS socket that reads next.
 */
export function readClientHello(socket: Socket, waitMs: number, maxBytes = MAX_CLIENT_HELLO_BYTES): Promise<ReadHello> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: ReadHello): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (chunks.length > 0) socket.unshift(Buffer.concat(chunks));
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      const out = parseClientHello(chunks.length === 1 ? chunk : Buffer.concat(chunks), maxBytes);
      if (out.state === 'ok') done({ hello: out.hello, length: out.length });
      else if (out.state === 'refused') done({ refused: out.reason });
      // Records of a few bytes each cannot make the buffer grow without bound either.
      else if (size > 2 * maxBytes) done({ refused: `no whole ClientHello in ${size} bytes` });
    };
    const onClose = (): void => done({ closed: true });
    const timer = setTimeout(() => done({ refused: `no whole ClientHello within ${waitMs} ms` }), waitMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}

/** A client whose handshake with bb completed. */
export interface TerminatedTls {
  /** The decrypted client socket. */
  client: tls.TLSSocket;
  /** The protocol agreed with the client (and the upstream), absent when none. */
  alpn?: string;
  /** The upstream connection made for it, when there is one (absent after an upstream failure or an unread ClientHello). */
  upstream?: { socket: tls.TLSSocket; origin: string };
  /** The SNI name the client sent. */
  servername?: string;
}

/** How terminateMirrored is run. */
export interface MirrorOptions {
  /** The raw client socket, its first bytes a TLS handshake record. */
  socket: Socket;
  /** Leaves for bb's side: the client's SNI name, else `defaultHost`. */
  leaves: LeafFactory;
  /** The name of the leaf for a client that sends no SNI (the CONNECT host, the target's host). */
  defaultHost: string;
  /** The upstream to connect to (https). */
  upstream: Upstream;
  /** Forward mode: send the client's SNI name upstream (a reverse proxy keeps the target's). */
  servernameFromClient: boolean;
  /** TLS to upstreams. */
  tlsOptions: UpstreamTlsOptions;
  /** Max wait for the upstream's TCP and TLS handshake, ms (0 = none). */
  connectTimeoutMs: number;
  /** Max wait for the rest of the ClientHello, ms. */
  helloTimeoutMs: number;
  /** Called for each upstream socket made here (the proxy destroys them at close). */
  track?: (socket: Socket) => void;
  /** The client's handshake completed: tap it. Called synchronously in 'secure', before a decrypted byte is read. */
  onSecure: (done: TerminatedTls) => void;
  /** The client's handshake failed (refused bb's leaf, hung up, no shared protocol). */
  onFailure: (err: NodeJS.ErrnoException) => void;
}

/** What bb offers the client once it knows the upstream's answer. */
type ClientAlpn = { kind: 'one'; name: string } | { kind: 'none' } | { kind: 'refuse' } | { kind: 'default' };

/** Terminates a client's TLS with ALPN mirrored (see the head of this file). */
export function terminateMirrored(opts: MirrorOptions): void {
  const { socket } = opts;
  void readClientHello(socket, opts.helloTimeoutMs).then((read) => {
    if (socket.destroyed) return;
    if (!('hello' in read)) {
      finishClient(opts, { kind: 'default' });
      return;
    }
    const { hello } = read;
    const servername = opts.servernameFromClient && hello.servername ? hello.servername : opts.upstream.servername;
    const upstream = connectUpstream({ ...opts.upstream, servername }, opts.tlsOptions, hello.alpn ?? null) as tls.TLSSocket;
    opts.track?.(upstream);
    // Kept for good: an upstream that fails after the hand-over but before the tap listens must not throw.
    upstream.on('error', () => {});
    const timer = opts.connectTimeoutMs > 0
      ? setTimeout(() => upstream.destroy(Object.assign(new Error(`no connection after ${opts.connectTimeoutMs} ms`), { code: 'BB_CONNECT_TIMEOUT' })), opts.connectTimeoutMs)
      : undefined;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      socket.off('close', onClientGone);
      return true;
    };
    const onClientGone = (): void => {
      if (settle()) upstream.destroy();
    };
    socket.once('close', onClientGone);
    upstream.once('secureConnect', () => {
      if (!settle()) return;
      const chosen = upstream.alpnProtocol;
      finishClient(opts, chosen ? { kind: 'one', name: chosen } : { kind: 'none' }, { socket: upstream, origin: opts.upstream.origin });
    });
    upstream.once('error', (err: NodeJS.ErrnoException) => {
      if (!settle()) return;
      upstream.destroy();
      if (err.code === NO_APPLICATION_PROTOCOL) finishClient(opts, { kind: 'refuse' });
      else if (hello.alpn && !hello.alpn.includes('http/1.1') && hello.alpn.includes('h2')) finishClient(opts, { kind: 'one', name: 'h2' });
      else finishClient(opts, { kind: 'default' });
    });
  });
}

/** Finishes the client's handshake offering what `alpn` says, then hands the decrypted socket over. */
function finishClient(opts: MirrorOptions, alpn: ClientAlpn, upstream?: { socket: tls.TLSSocket; origin: string }): void {
  const { socket, leaves } = opts;
  leaves.contextFor(opts.defaultHost).then(
    (secureContext) => {
      if (socket.destroyed) {
        upstream?.socket.destroy();
        return;
      }
      const client = new tls.TLSSocket(socket, {
        isServer: true,
        secureContext,
        ...alpnOption(alpn),
        // The client may name another host than the CONNECT (or the target) did: give it a leaf for the name it checks.
        SNICallback: (name, done) => {
          leaves.contextFor(name).then(
            (ctx) => done(null, ctx),
            () => done(null, secureContext),
          );
        },
      });
      let secure = false;
      client.once('secure', () => {
        secure = true;
        // A server-side TLSSocket made without a tls.Server never clears this flag after its handshake, and
        // node:http2 (bb answering a stream itself) waits for a 'secureConnect' that never comes while it is set.
        (client as tls.TLSSocket & { secureConnecting: boolean }).secureConnecting = false;
        const sni = (client as tls.TLSSocket & { servername?: string | false }).servername;
        const agreed = client.alpnProtocol;
        opts.onSecure({ client, alpn: agreed || undefined, upstream, servername: typeof sni === 'string' && sni ? sni : undefined });
      });
      client.on('error', (err: NodeJS.ErrnoException) => {
        if (!secure) {
          upstream?.socket.destroy();
          opts.onFailure(alpn.kind === 'refuse' ? refusalOf(err) : err);
        }
        client.destroy();
      });
    },
    (err: Error) => {
      // No leaf for this name (it cannot be a host name): nothing sensible to intercept.
      upstream?.socket.destroy();
      opts.onFailure(Object.assign(err, { code: 'BB_NO_LEAF' }));
      socket.destroy();
    },
  );
}

/** The TLSSocket options that make the client's handshake offer `alpn`. */
function alpnOption(alpn: ClientAlpn): Pick<tls.TlsOptions, 'ALPNProtocols' | 'ALPNCallback'> {
  switch (alpn.kind) {
    case 'default':
      return { ALPNProtocols: ['http/1.1'] };
    case 'none':
      return {};
    // Returning undefined makes Node send the fatal no_application_protocol alert.
    case 'refuse':
      return { ALPNCallback: () => undefined };
    case 'one':
      return { ALPNCallback: ({ protocols }) => (protocols.includes(alpn.name) ? alpn.name : undefined) };
  }
}

/** The client's error when bb refused it as the upstream refused bb: OpenSSL's server-side code, and why in one line. */
function refusalOf(err: NodeJS.ErrnoException): NodeJS.ErrnoException {
  const reason = 'the upstream accepts none of the protocols the client offers by ALPN (no_application_protocol), so bb refused them too';
  return Object.assign(new Error(reason), { code: 'ERR_SSL_NO_APPLICATION_PROTOCOL', reason, cause: err });
}
