// The client → upstream direction of the HTTP/1 tap. Each request head is
// held until whole and judged (parser.ts), then goes upstream as received
// (rewritten only when a flag asks); body bytes follow as they arrive. This
// side owns the request parser, its cursor into the chunk being read and the
// client bytes it holds back; what a refused head or a switch does to the
// connection is tap.ts's.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { now } from '../events.js';
import type { ConnectionState } from '../connection.js';
import { outgoingHead } from '../request-rewrite.js';
import type { Upstream } from '../upstream.js';
import type { TapSettings, UpstreamQuery } from '../tap-settings.js';
import { Http1Parser, type FeedOutcome } from './parser.js';
import { viewStart } from './lines.js';
import type { RequestHead } from './head.js';
import type { Exchange, Exchanges } from './exchanges.js';
import type { UpstreamSide } from './upstream-side.js';

/** Client bytes held after an upgrade request before bb stops reading the client: what follows waits in the client's socket buffers. */
export const MAX_HELD_AFTER_UPGRADE = 64 * 1024;

/** What the client side asks of its connection (tap.ts). */
export interface ClientSideOwner {
  /** Writes bb's own answers at the front of the queue, in turn. */
  answerSynthetic(): void;
}

/** Reads the client's requests and passes them to the upstream side. */
export class ClientSide {
  /** The exchange whose request is being received. */
  sending: Exchange | undefined;
  /** The client sent its FIN. */
  ended = false;
  /** Request heads read on this connection (only a first one may be the h2 preface). */
  heads = 0;
  /** The CONNECT head the parser stopped at (a CONNECT never goes upstream). */
  lastConnect: RequestHead | undefined;
  private readonly parser: Http1Parser;
  /** The chunk being read, and how far into it bytes were passed on (or held). */
  private chunk: Buffer = Buffer.alloc(0);
  private from = 0;
  /** The end of a head left in `chunk` from `from` on to go upstream with the bytes after it, in one write; -1 when none. */
  private headEnd = -1;
  /** Client bytes of a head not yet whole (the parser holds a copy; these are for a refusal's record). */
  private heldHead: Buffer[] = [];
  /** Client bytes after an upgrade request, kept until the answer says what they are. */
  private afterUpgrade: Buffer[] = [];
  /** Their length. */
  private heldBytes = 0;

  constructor(
    private readonly conn: ConnectionState,
    private readonly client: Duplex,
    private readonly settings: TapSettings,
    private readonly exchanges: Exchanges,
    private readonly upstream: UpstreamSide,
    private readonly owner: ClientSideOwner,
  ) {
    this.parser = new Http1Parser('request', {
      head: (head, end) => this.onHead(head as RequestHead, end),
      body: (chunk, start, end) => {
        if (this.sending && !this.sending.synthetic) settings.bus.emit({ type: 'request-body', exchangeId: this.sending.id, time: now(), chunk: chunk.subarray(start, end) });
      },
      end: (end, rawTrailers) => {
        this.forwardUp(this.chunk, this.from, end);
        this.from = end;
        const ex = this.sending;
        this.sending = undefined;
        if (!ex) return;
        ex.requestEnded = true;
        if (!ex.synthetic) settings.bus.emit({ type: 'request-ended', exchangeId: ex.id, time: now(), rawTrailers });
        if (ex.synthetic && this.exchanges.front === ex) this.owner.answerSynthetic();
      },
    }, settings.maxHeadBytes);
  }

  /** Reads one chunk of the client's. On 'ok' every byte of it went upstream, or is held while a head is not yet whole. */
  read(chunk: Buffer): FeedOutcome {
    this.chunk = chunk;
    this.from = 0;
    this.headEnd = -1;
    const out = this.parser.feed(chunk);
    if (out.state === 'ok') {
      if (!this.parser.readingHead) this.forwardUp(chunk, this.from, chunk.length);
      else if (this.from < chunk.length) this.heldHead.push(chunk.subarray(this.from));
    } else if (out.state === 'error' && this.from < this.headEnd) {
      // A body broke after its head was accepted: the head goes upstream alone, as it would have at once.
      this.forwardUp(chunk, this.from, this.headEnd);
    }
    return out;
  }

  /** Where the client's requests stand between chunks: between messages, inside a head, or inside a body. */
  get reading(): 'idle' | 'request-head' | 'streaming' {
    if (!this.parser.readingHead) return 'streaming';
    return this.parser.idle ? 'idle' : 'request-head';
  }

  /** The parser stopped at an upgrade request: `rest` (the bytes after it) is held, and so is what follows, until the answer. False once the hold is full. */
  holdAfterUpgrade(rest: Buffer): boolean {
    this.afterUpgrade = [];
    this.heldBytes = 0;
    return this.hold(rest);
  }

  /** Holds a client chunk that came while an upgrade waits for its answer; false once MAX_HELD_AFTER_UPGRADE is reached (stop reading the client). */
  hold(chunk: Buffer): boolean {
    if (chunk.length > 0) this.afterUpgrade.push(chunk);
    this.heldBytes += chunk.length;
    return !this.holdFull;
  }

  /** True once the bytes held after an upgrade request reach MAX_HELD_AFTER_UPGRADE. */
  get holdFull(): boolean {
    return this.heldBytes >= MAX_HELD_AFTER_UPGRADE;
  }

  /** The bytes held after an upgrade request (none are held after this). */
  takeHeld(): Buffer[] {
    const held = this.afterUpgrade;
    this.afterUpgrade = [];
    this.heldBytes = 0;
    return held;
  }

  /** The upgrade was answered without 101: the parser reads HTTP again. */
  resume(): void {
    this.parser.resume();
  }

  /** The head bytes read so far, ending with `chunk` (the h2 preface test reads them). */
  headBytes(chunk: Buffer): Buffer {
    return this.heldHead.length > 0 ? Buffer.concat([...this.heldHead, chunk]) : chunk;
  }

  /** The bytes of a refused head, from its first byte to the end of `chunk` (kept in the refusal's record). */
  refusedBytes(chunk: Buffer): Buffer {
    const raw = Buffer.concat([...this.heldHead, chunk.subarray(this.from)]);
    this.heldHead = [];
    return raw;
  }

  /** A request as resolveUpstream and onConnect see it. */
  queryOf(head: RequestHead): UpstreamQuery {
    return { url: head.target, method: head.method, httpVersion: head.httpVersion, rawHeaders: head.rawHeaders, socket: this.client };
  }

  /** An accepted head: a new exchange, its upstream chosen and its head sent there (bb answers a target it cannot resolve with a 502). */
  private onHead(head: RequestHead, end: number): void {
    this.heads++;
    this.heldHead = [];
    this.from = end;
    if (head.method === 'CONNECT') {
      // Handled at the switch: a CONNECT never goes upstream.
      this.lastConnect = head;
      return;
    }
    let upstream: Upstream | undefined;
    let badTarget: string | undefined;
    try {
      upstream = this.settings.resolveUpstream(this.queryOf(head), this.conn.scheme);
    } catch (err) {
      badTarget = (err as Error).message;
    }
    const ex: Exchange = { id: this.settings.nextExchangeId(), method: head.method, head, upgrade: head.upgrade, requestEnded: false, responseStarted: false, finished: false };
    this.settings.bus.emit({
      type: 'exchange-started',
      exchangeId: ex.id,
      connectionId: this.conn.id,
      time: now(),
      scheme: this.conn.scheme,
      method: head.method,
      target: head.target,
      httpVersion: head.httpVersion,
      rawHeaders: head.rawHeaders,
      upstream: upstream?.origin ?? 'invalid',
      upgrade: head.upgrade,
    });
    this.exchanges.add(ex);
    this.sending = ex;
    if (!upstream) {
      this.exchanges.failWith502(ex, { code: 'BB_BAD_TARGET', message: badTarget ?? 'no upstream', phase: 'request' }, 'invalid');
      return;
    }
    this.upstream.route(upstream, this.sending);
    const out = outgoingHead(head, upstream, this.settings, this.conn.scheme, (this.client as Socket).remoteAddress ?? '');
    const start = out === head.raw ? viewStart(head.raw, this.chunk, end) : -1;
    if (start >= 0) {
      // The head as sent is the bytes of this chunk before `end`: it leaves with the body bytes after it, in one write.
      this.from = start;
      this.headEnd = end;
    } else this.writeUp(out);
    this.upstream.expect(head.method);
  }

  private writeUp(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.sending?.synthetic) return; // a request bb answers itself: its bytes go nowhere
    this.upstream.write(bytes);
  }

  private forwardUp(chunk: Buffer, from: number, to: number): void {
    if (to > from) this.writeUp(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
  }
}
