// A replayed WebSocket's opening handshake (RFC 6455 §4.1), made by bb: the
// upgrade head is written by bb's own head writer (request.ts's wireRequest)
// on a plain socket, as every replayed HTTP/1.1 request's is, so the target
// gets the recorded headers in their order and case with duplicates kept (a
// client library writes its own: names re-cased, duplicates merged, its
// upgrade headers last). Only the key is bb's own, in the recorded key's
// place: the target's Sec-WebSocket-Accept is checked against it.
//
// ws then speaks the frames on that socket. Its client only opens sockets
// through its own request, so it gets one through `createConnection` (an
// http.request option it passes on): a stream over the switched socket that
// answers ws's own request head itself, with the target's subprotocol and
// extensions, so ws negotiates permessage-deflate as the target did. ws's
// head never reaches the wire.
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { headerValue, headerValues } from '../../core/index.js';
import { Http1Parser } from '../../proxy/index.js';
import { wireRequest, type RequestParts, type WireRequest } from './request.js';

/** RFC 6455 §1.3's GUID, appended to the key before hashing. */
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The Sec-WebSocket-Accept a server answers `key` with (RFC 6455 §4.2.2). */
export function acceptFor(key: string): string {
  return createHash('sha1').update(key + GUID).digest('base64');
}

/** A fresh Sec-WebSocket-Key: 16 random bytes, base64 (RFC 6455 §4.1). */
export function freshKey(): string {
  return randomBytes(16).toString('base64');
}

/**
 * The upgrade's bytes: the recorded head (Host following the target, in its
 * place) with `key` for each recorded Sec-WebSocket-Key, as a GET over
 * HTTP/1.1 without a body. What an upgrade needs and the capture lacks (a
 * WebSocket recorded over HTTP/2 has no Upgrade, Connection or key) is added
 * at the end, as a client writes it.
 */
export function upgradeRequest(parts: RequestParts, host: string, key: string): WireRequest {
  const headers: Array<[string, string]> = [];
  const has = new Set<string>();
  for (const [name, value] of parts.headers) {
    const lower = name.toLowerCase();
    has.add(lower);
    headers.push([name, lower === 'sec-websocket-key' ? key : value]);
  }
  if (!has.has('upgrade')) headers.push(['Upgrade', 'websocket']);
  if (!has.has('connection')) headers.push(['Connection', 'Upgrade']);
  if (!has.has('sec-websocket-key')) headers.push(['Sec-WebSocket-Key', key]);
  if (!has.has('sec-websocket-version')) headers.push(['Sec-WebSocket-Version', '13']);
  return wireRequest({ method: 'GET', target: parts.target, version: '1.1', headers }, host);
}

/** How the handshake ended. */
export type UpgradeOutcome =
  /** The target switched: `socket` speaks WebSocket, `rest` is what came after the 101's head. */
  | { kind: 'switched'; socket: Socket; rest: Buffer; rawHeaders: string[] }
  /** The target answered without switching (the socket is closed). */
  | { kind: 'refused'; status: number; rawHeaders: string[] }
  /** No usable answer: an error code, or what is wrong with the 101 (ws's words). */
  | { kind: 'failed'; reason: string };

/** What is wrong with a 101 for `key` (RFC 6455 §4.1, the client's checks), or undefined when nothing is. */
export function badSwitch(rawHeaders: readonly string[], key: string): string | undefined {
  if (!/^websocket$/i.test(headerValue(rawHeaders, 'upgrade')?.trim() ?? '')) return 'Invalid Upgrade header';
  if (!headerValues(rawHeaders, 'connection').some((v) => v.split(',').some((t) => t.trim().toLowerCase() === 'upgrade'))) return 'Invalid Connection header';
  if (headerValue(rawHeaders, 'sec-websocket-accept') !== acceptFor(key)) return 'Invalid Sec-WebSocket-Accept header';
  return undefined;
}

/** Sends `req` (an upgrade with `key`) on a new connection to host:port and reads the answer's head; bounded by `timeoutMs`; never throws. */
export function openUpgrade(host: string, port: number, req: WireRequest, key: string, timeoutMs: number): Promise<UpgradeOutcome> {
  return new Promise<UpgradeOutcome>((resolve) => {
    const socket = connect({ host, port, noDelay: true });
    let response: { status: number; rawHeaders: string[] } | undefined;
    const finish = (outcome: UpgradeOutcome) => {
      clearTimeout(timer);
      socket.off('data', onData).off('end', onEnd).off('close', onEnd).off('error', onError);
      if (outcome.kind === 'switched') socket.pause();
      else socket.destroy();
      resolve(outcome);
    };
    const parser = new Http1Parser('response', {
      head: (head) => {
        // An interim answer (100) is not the answer; a final one that does not switch is (its body is not read).
        if (head.kind !== 'response' || head.informational) return;
        response = { status: head.statusCode, rawHeaders: head.rawHeaders };
        if (!head.switches) finish({ kind: 'refused', ...response });
      },
      body: () => {},
      end: () => {},
    });
    parser.expect(req.method);
    const onData = (chunk: Buffer) => {
      const outcome = parser.feed(chunk);
      if (outcome.state === 'error') finish({ kind: 'failed', reason: outcome.fault.code });
      else if (outcome.state === 'switched' && response) {
        const bad = badSwitch(response.rawHeaders, key);
        finish(bad ? { kind: 'failed', reason: bad } : { kind: 'switched', socket, rest: Buffer.from(chunk.subarray(outcome.at)), rawHeaders: response.rawHeaders });
      }
    };
    // As Node's HTTP client names it (ws's reason before bb made the handshake).
    const onEnd = () => finish({ kind: 'failed', reason: 'ECONNRESET' });
    const onError = (err: NodeJS.ErrnoException) => finish({ kind: 'failed', reason: err.code ?? err.message });
    const timer = setTimeout(() => finish({ kind: 'failed', reason: 'Opening handshake has timed out' }), timeoutMs);
    socket.on('data', onData).once('end', onEnd).once('close', onEnd).once('error', onError);
    socket.write(req.head);
  });
}

/**
 * A stream for ws's `createConnection` over a socket the target already
 * switched: ws's request head is answered here with a 101 for ws's own key,
 * carrying the target's Sec-WebSocket-Protocol and -Extensions, and the
 * bytes that followed the target's 101; from then on bytes go through both
 * ways, each side's end and errors passed to the other.
 */
export class SwitchedSocket extends Duplex {
  private ownHead = '';
  private through = false;

  /** `answer` is the target's 101 (its raw headers); `rest` what came after its head. */
  constructor(
    private readonly socket: Socket,
    private readonly answer: readonly string[],
    private readonly rest: Buffer,
  ) {
    super({ allowHalfOpen: true });
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    if (this.through) {
      this.socket.write(chunk, callback);
      return;
    }
    this.ownHead += chunk.toString('latin1');
    if (!this.ownHead.includes('\r\n\r\n')) return callback();
    const key = /\r\nsec-websocket-key:[ \t]*([^\r]*)/i.exec(this.ownHead)?.[1]?.trim() ?? '';
    const negotiated = ['sec-websocket-protocol', 'sec-websocket-extensions']
      .flatMap((name) => headerValues(this.answer, name).map((v) => `${name}: ${v}\r\n`))
      .join('');
    this.through = true;
    this.push(Buffer.concat([
      Buffer.from(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n${negotiated}\r\n`, 'latin1'),
      this.rest,
    ]));
    this.socket.on('data', (c: Buffer) => {
      if (!this.push(c)) this.socket.pause();
    });
    this.socket.on('end', () => this.push(null));
    this.socket.resume();
    callback();
  }

  override _read(): void {
    if (this.through) this.socket.resume();
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.socket.end(callback);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.socket.destroy();
    callback(err);
  }
}
