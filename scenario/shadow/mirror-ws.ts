// One mirror target's side of a WebSocket conversation (docs/shadow.md "What
// is mirrored, and when" and "Sessions"): the client's messages go to the
// target as they went to the primary, each target with its own issued
// values. A server that hands a value over the socket (a ticket, a cursor, a
// session id in its first message) gets it back in the client's later
// messages, so the r-th server message of the primary and the r-th of the
// target are bound as two answers to one request are (message-pairs.ts),
// and a client message that carries a value a server message issued waits
// until the target has said as much as the primary had when the client sent
// it (read-after-write order, as an HTTP mirror waits for the primary's
// response head), or CATCH_UP_MS at most: a target that says less (a
// regression) delays its own copy only; messages carrying no such value wait
// only for those before them (the client's order).
import type WebSocket from 'ws';
import { rewriteTokens, textEncoding, tokensOf, type Counterparts } from '../../diff/index.js';
import { CATCH_UP_MS, type MessagePairs } from './message-pairs.js';

/** The client's side of a mirrored WebSocket. */
export interface MirroredSocket {
  /** Sends one client message (text 1, binary 2, ping 9), once the target has said what the primary had; `sent` once its bytes are written to the socket or dropped. */
  send(opcode: number, data: Buffer, sent?: () => void): void;
  /** The primary's server sent a data message: its text (undefined for a binary one, or a text the tap kept only the first bytes of); `at`: when, on the clock of what the client sent (ClientSends). */
  heard(text: string | undefined, at?: number): void;
  /** Closes with the client's code, after the client's messages before it. */
  close(code?: number, reason?: string): void;
  /**
   * The client's close answered the primary's server's close: the target's server closes this side itself (ws
   * answers it), as the primary's did; one that has not CLOSE_WAIT_MS after the client's messages before it is
   * closed with the client's code.
   */
  answerClose(code?: number, reason?: string): void;
  /** The primary's conversation ended (its sockets closed): this side ends too, after the client's messages before it (end()). */
  end(): void;
  /** The tee dropped this conversation's mirrors: the socket is cut now, messages still queued are not sent. */
  drop(): void;
}

/** How long a target's side whose close the client started may take to finish it once the primary's has ended. */
const CLOSE_WAIT_MS = 2000;

type Job = { until: number; after: number; answers?: readonly number[]; run: () => void };

/** The target's answers still to come (answer-wait.ts), as a conversation asks about them. */
export interface AnswerWaits {
  /** Exchanges whose primary answer issued one of `tokens`, the target's answer still to come. */
  behind(tokens: () => ReadonlySet<string>): number[] | undefined;
  /** Whether the target's answer to an exchange is still to come. */
  unanswered(id: number): boolean;
}

/** A target's open WebSocket, fed the client's messages and the primary's server messages. */
export class MirroredConversation implements MirroredSocket {
  private readonly queue: Job[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The `sent` callbacks of messages not yet written: a socket that closes releases them all. */
  private readonly unsent = new Set<() => void>();
  /** answerClose: the target's own close is waited for (end() leaves an open side to it). */
  private closeAwaited = false;

  /** `bindings`: the target's counterparts; `said`: this conversation's server messages (OpenStreams); `answers`: the target's answers still to come; made before the socket can deliver a message. */
  constructor(
    private readonly ws: WebSocket,
    private readonly bindings: Counterparts,
    private readonly said: MessagePairs,
    private readonly answers: AnswerWaits,
  ) {
    ws.once('close', () => {
      for (const release of [...this.unsent]) release();
    });
    ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      this.said.target(isBinary ? undefined : Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8'));
      this.flush();
    });
  }

  heard(text: string | undefined, at?: number): void {
    this.said.primary(text, at);
  }

  send(opcode: number, data: Buffer, sent: () => void = () => {}): void {
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.unsent.delete(release);
      sent();
    };
    this.unsent.add(release);
    let tokens: Set<string> | undefined;
    const carried = () => (tokens ??= new Set(tokensOf(data.toString('utf8'))));
    const carries = opcode === 1 && this.said.targetCount < this.said.primaryCount && this.said.awaits(carried());
    // A value an answer on another connection issued (a ticket POSTed, then acknowledged on the socket): the target's answer first.
    const answers = opcode === 1 ? this.answers.behind(carried) : undefined;
    this.enqueue(carries, answers, () => {
      if (this.ws.readyState !== this.ws.OPEN) return release();
      // ws calls back once the frame is written to the socket (or failed): the bytes are the kernel's from there.
      if (opcode === 1) {
        const text = data.toString('utf8');
        this.ws.send(this.bindings.size ? rewriteTokens(text, this.bindings, textEncoding(text)).text : text, release);
      } else if (opcode === 2) this.ws.send(data, { binary: true }, release);
      else if (opcode === 9) this.ws.ping(data, undefined, release);
      else release();
    });
  }

  drop(): void {
    this.queue.length = 0;
    clearTimeout(this.timer);
    this.ws.terminate();
    for (const release of [...this.unsent]) release();
  }

  close(code?: number, reason?: string): void {
    this.enqueue(false, undefined, () => this.closeWith(code, reason));
  }

  answerClose(code?: number, reason?: string): void {
    this.enqueue(false, undefined, () => {
      const ws = this.ws;
      // The target's server closed already: ws answered it.
      if (ws.readyState !== ws.OPEN) return;
      this.closeAwaited = true;
      const late = setTimeout(() => {
        if (ws.readyState !== ws.OPEN) return;
        this.closeWith(code, reason);
        setTimeout(() => ws.terminate(), CLOSE_WAIT_MS).unref();
      }, CLOSE_WAIT_MS).unref();
      ws.once('close', () => clearTimeout(late));
    });
  }

  private closeWith(code: number | undefined, reason: string | undefined): void {
    const ws = this.ws;
    if (ws.readyState !== ws.OPEN) ws.terminate();
    // A client's close with no status code goes out with none (ws sends an empty close frame), as the primary got it.
    else if (code === undefined || code === 1005) ws.close();
    // ws throws on a code a client may not send (1004, 1006, 1015, 2000…): those go out as 1000.
    else ws.close((code >= 1000 && code <= 1014 && code !== 1004 && code !== 1006) || (code >= 3000 && code < 5000) ? code : 1000, reason ?? '');
  }

  /**
   * The primary's conversation ended. A side the client's close frame is
   * closing gets CLOSE_WAIT_MS to finish its handshake; a side still open
   * (the client left without a close frame: a tab killed, a network gone)
   * is cut as the primary's was, once the target has said as many messages
   * as the primary had (its answer to the client's last message is
   * recorded, as the primary's was), CATCH_UP_MS at most. Before, such a
   * side stayed open until the run's end: one socket to each target per
   * conversation a client dropped.
   */
  end(): void {
    this.enqueue(true, undefined, () => {
      const ws = this.ws;
      // Its server's close is awaited (answerClose): that wait ends it.
      if (ws.readyState === ws.OPEN && this.closeAwaited) return;
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.terminate();
      else if (ws.readyState === ws.CLOSING) setTimeout(() => ws.terminate(), CLOSE_WAIT_MS).unref();
    });
  }

  // In the client's order; one that carries an awaited value once the target said as many messages as the primary had (or its wait is over).
  private enqueue(carries: boolean, answers: readonly number[] | undefined, run: () => void): void {
    this.queue.push({ until: Date.now() + CATCH_UP_MS, after: carries ? this.said.primaryCount : 0, ...(answers ? { answers } : {}), run });
    this.flush();
  }

  /** Looks at the queue again (an answer the next message waits for came). */
  retry(): void {
    if (this.queue.length > 0) this.flush();
  }

  private ready(job: Job, now: number): boolean {
    return now >= job.until || (this.said.targetCount >= job.after && !(job.answers?.some((id) => this.answers.unanswered(id)) ?? false));
  }

  private flush(): void {
    const now = Date.now();
    while (this.queue.length > 0 && this.ready(this.queue[0]!, now)) this.queue.shift()!.run();
    clearTimeout(this.timer);
    this.timer = this.queue.length > 0 ? setTimeout(() => this.flush(), Math.max(0, this.queue[0]!.until - now)).unref() : undefined;
  }
}
