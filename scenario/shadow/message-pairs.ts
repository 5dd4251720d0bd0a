// Values a stream's server messages issue, bound per target (docs/shadow.md
// "Sessions: each target's own ids and cookies"): a WebSocket server that
// hands a ticket over the socket, an event stream whose events name jobs, a
// gRPC call whose messages name what it watches.
// The client sends such a value back while the stream goes on, so the relay
// cannot wait for the stream's end as it waits for an answer's: the r-th
// message of the primary's stream and the r-th of the target's are bound as
// soon as both are in (Counterparts.learnMessage), whichever came second.
// And a request that carries a value a primary's message issued, whose
// target message has not come yet (the client read it and sent it back, on
// this connection or another), reaches the target once the target has said
// as much on that stream as the primary had (read-after-write order, as a
// mirror waits for the primary's response head), or CATCH_UP_MS at most: a
// target that says less (a regression) delays only its own copies. Nothing
// else waits: a stream whose target lags (a ticker on another clock, a
// candidate that pushes less) holds back no request that does not need it.
import { EventStreamParser } from '../../core/index.js';
import { grpcMessageFeed } from '../../capture/index.js';
import { BIND_READ_BYTES, streamMessageValues, type Counterparts } from '../../diff/index.js';

/** A server message as binding reads it: text (a WebSocket's, an event's data) or a gRPC message's bytes. */
export type Said = string | Uint8Array;

/** How long a mirrored request waits for the target's open streams to say what the primary's had said, at most. */
export const CATCH_UP_MS = 1000;
/** Messages of one side kept while the other side's same message has not come (the oldest go first). */
const MAX_PENDING = 256;
/**
 * Bytes of such messages one target's open streams keep in all: past it the longest-open stream's oldest go first
 * (a client sends back what it heard lately), and a message larger than all of it is not kept (so not bound).
 * Without it a target that lags on many conversations whose primary says long messages held up to 256 × 256 KiB
 * for each of them.
 */
export const MAX_PENDING_BYTES = 16 << 20;

/** What one target's open streams keep of messages waiting for their pair, shared by its MessagePairs. */
export interface PendingBudget {
  bytes: number;
  readonly max: number;
  /** Forgets one kept message to make room (false: none kept). */
  evict(): boolean;
}

/** The memory a kept message counts for (a string's characters, a gRPC message's bytes). */
function sizeOf(text: Said): number {
  return typeof text === 'string' ? text.length : text.byteLength;
}

/** The primary's and one target's server messages of one stream, paired by number. */
export class MessagePairs {
  private primarySaid = 0;
  private targetSaid = 0;
  /** Messages waiting for the other side's message of the same number. */
  private readonly primaryTexts = new Map<number, Said>();
  private readonly targetTexts = new Map<number, Said>();
  /** The values each waiting primary text issues, read when first asked (awaits). */
  private readonly issued = new Map<number, string[]>();
  /** When each waiting primary text crossed, on the clock of what the client sent (Counterparts.sends). */
  private readonly primaryAt = new Map<number, number>();

  /**
   * `bindings`: the target's counterparts (shared with its HTTP lanes); `onTarget` hears each target message after it was
   * bound; `onLearned`, the primary's values a pair of messages taught a counterpart of.
   */
  constructor(
    private readonly bindings: Counterparts,
    private readonly onTarget: () => void = () => {},
    private readonly onLearned: (values: string[]) => void = () => {},
    /** Shared with the target's other streams (OpenStreams); default: this stream's own. */
    private readonly budget: PendingBudget = { bytes: 0, max: MAX_PENDING_BYTES, evict: () => this.dropOldestKept() },
  ) {}

  /** Bytes this stream keeps of messages waiting for their pair (counted in the budget). */
  private keptBytes = 0;
  /** The stream ended (release): later messages are paired with what is kept, and kept no more. */
  private released = false;

  /** The stream ended: what it kept leaves the budget. */
  release(): void {
    this.released = true;
    this.budget.bytes -= this.keptBytes;
    this.keptBytes = 0;
    this.primaryTexts.clear();
    this.targetTexts.clear();
    this.issued.clear();
    this.primaryAt.clear();
  }

  /** Messages the primary's server sent so far. */
  get primaryCount(): number {
    return this.primarySaid;
  }

  /** Messages the target sent so far. */
  get targetCount(): number {
    return this.targetSaid;
  }

  /**
   * The primary's next message (undefined: binary, or kept only in part; it counts in the numbering); `at`: when it
   * crossed on the clock of what the client sent (default: now): a value the client sent before it is the client's own.
   */
  primary(text: Said | undefined, at = this.bindings.sends?.tick()): void {
    const r = this.primarySaid++;
    if (text === undefined) return;
    if (at !== undefined) this.primaryAt.set(r, at);
    this.match(r, text, 'primary');
  }

  /** The target's next message (undefined as `primary`'s). */
  target(text: Said | undefined): void {
    const r = this.targetSaid++;
    if (text !== undefined) this.match(r, text, 'target');
    this.onTarget();
  }

  /** Whether a message of the primary's that the target has not matched yet issued one of `tokens` (its counterpart is not known yet). */
  awaits(tokens: ReadonlySet<string>): boolean {
    if (this.targetSaid >= this.primarySaid || tokens.size === 0) return false;
    for (const [r, text] of this.primaryTexts) {
      let values = this.issued.get(r);
      if (!values) this.issued.set(r, (values = streamMessageValues(text, r).map((v) => v.value)));
      if (values.some((v) => tokens.has(v))) return true;
    }
    return false;
  }

  private match(r: number, text: Said, side: 'primary' | 'target'): void {
    const [mine, other] = side === 'primary' ? [this.primaryTexts, this.targetTexts] : [this.targetTexts, this.primaryTexts];
    const theirs = other.get(r);
    if (theirs !== undefined) {
      other.delete(r);
      this.unkeep(theirs);
      this.issued.delete(r);
      const at = this.primaryAt.get(r);
      this.primaryAt.delete(r);
      const sends = this.bindings.sends;
      const own = sends && at !== undefined ? sends.sentBefore(at) : undefined;
      const learned = side === 'primary' ? this.bindings.learnMessage(r, text, theirs, own) : this.bindings.learnMessage(r, theirs, text, own);
      if (learned.length) this.onLearned(learned);
      return;
    }
    // The other side's r-th came already (binary, or kept in part): nothing to wait for.
    if (r < (side === 'primary' ? this.targetSaid : this.primarySaid) || text.length > BIND_READ_BYTES || this.released) {
      this.primaryAt.delete(r);
      return;
    }
    const size = sizeOf(text);
    // Room in the target's budget, the oldest kept going first; else (larger than all of it) not kept.
    while (this.budget.bytes + size > this.budget.max && this.budget.evict());
    if (this.budget.bytes + size > this.budget.max) {
      this.primaryAt.delete(r);
      return;
    }
    mine.set(r, text);
    this.keptBytes += size;
    this.budget.bytes += size;
    if (mine.size > MAX_PENDING) this.dropOldest(side);
  }

  /** Forgets this stream's oldest message still waiting for its pair (the primary's first); false when none is kept. */
  dropOldestKept(): boolean {
    if (this.keptBytes === 0) return false;
    this.dropOldest(this.primaryTexts.size > 0 ? 'primary' : 'target');
    return true;
  }

  // Forgets one side's oldest message still waiting for its pair.
  private dropOldest(side: 'primary' | 'target'): void {
    const mine = side === 'primary' ? this.primaryTexts : this.targetTexts;
    const oldest = mine.keys().next().value;
    if (oldest === undefined) return;
    this.unkeep(mine.get(oldest)!);
    mine.delete(oldest);
    if (side === 'primary') {
      this.issued.delete(oldest);
      this.primaryAt.delete(oldest);
    }
  }

  private unkeep(text: Said): void {
    const size = sizeOf(text);
    this.keptBytes -= size;
    this.budget.bytes -= size;
  }
}

/**
 * Where a request handed over now must wait: each open stream the target is behind on in a value
 * the request carries, and how far the primary's went; and each exchange of another lane whose
 * primary answer issued a value the request carries, while the target's answer to it is not in.
 */
export interface CatchUp {
  until: number;
  marks: Array<[MessagePairs, number]>;
  /** Shared ids of those exchanges. */
  answers?: readonly number[];
}

/**
 * One target's open streams (WebSocket conversations, event streams), for binding, and its
 * read-after-write waits: on those streams' messages and on answers still to come (`unanswered`).
 */
export class OpenStreams {
  private readonly open = new Set<MessagePairs>();
  private readonly waiting = new Set<() => boolean>();
  /** What the open streams keep of messages waiting for their pair, in all. */
  readonly pending: PendingBudget;

  /**
   * `unanswered`: whether the target's answer to an exchange (by shared id) is still to come; `onLearned`: the primary's
   * values a stream's messages taught a counterpart of (MessagePairs).
   */
  constructor(
    private readonly bindings: Counterparts,
    private readonly unanswered: (id: number) => boolean = () => false,
    private readonly onLearned: (values: string[]) => void = () => {},
    maxPendingBytes = MAX_PENDING_BYTES,
  ) {
    // The longest-open stream that keeps any gives up its oldest (the Set's order is the order they opened in).
    this.pending = {
      bytes: 0,
      max: maxPendingBytes,
      evict: () => {
        for (const s of this.open) if (s.dropOldestKept()) return true;
        return false;
      },
    };
  }

  /** A new stream's pairs, counted among the open ones until `done()` (which releases what it kept). */
  add(): { pairs: MessagePairs; done(): void } {
    const pairs = new MessagePairs(this.bindings, () => this.wake(), this.onLearned, this.pending);
    this.open.add(pairs);
    return {
      pairs,
      done: () => {
        if (this.open.delete(pairs)) pairs.release();
        this.wake();
      },
    };
  }

  /**
   * What a request handed over now waits for: the open streams whose target has not yet said a
   * message of the primary's that issued one of the request's tokens (`tokens`, read only when a
   * stream lags), each with how far the primary's went; undefined when none.
   */
  behind(tokens: () => ReadonlySet<string>): CatchUp['marks'] | undefined {
    let marks: CatchUp['marks'] | undefined;
    for (const s of this.open) {
      if (s.targetCount >= s.primaryCount) continue;
      if (s.awaits(tokens())) (marks ??= []).push([s, s.primaryCount]);
    }
    return marks;
  }

  /** Whether `wait` still holds: a stream it marks still open and behind, or an answer it names still to come, within its time. */
  holds(wait: CatchUp): boolean {
    if (Date.now() >= wait.until) return false;
    return wait.marks.some(([s, n]) => this.open.has(s) && s.targetCount < n) || (wait.answers?.some(this.unanswered) ?? false);
  }

  /** Runs `go` once the target has caught up with `wait` (or its stream ended, or its time is over). */
  whenCaughtUp(wait: CatchUp | undefined, go: () => void): void {
    if (!wait) return go();
    let timer: NodeJS.Timeout | undefined;
    const check = (): boolean => {
      if (this.holds(wait)) return false;
      this.waiting.delete(check);
      clearTimeout(timer);
      go();
      return true;
    };
    if (check()) return;
    this.waiting.add(check);
    timer = setTimeout(check, Math.max(0, wait.until - Date.now()));
  }

  /** Looks at every wait again (a stream's message came, or an answer). */
  wake(): void {
    for (const check of [...this.waiting]) check();
  }
}

/**
 * A feed of an event stream's body chunks that calls `f` with each event's data as it completes, undefined for an
 * event past BIND_READ_BYTES (binding reads no more of a text; it still counts in the numbering).
 */
export function eventFeed(f: (data: string | undefined) => void): (chunk: Buffer) => void {
  // Each event as it is dispatched (a long stream's events are not held), and none held past what binding reads:
  // a peer's event that never ends took the shadow, and the primary's clients with it, past the heap.
  const parser = new EventStreamParser((e) => f(e.oversized ? undefined : e.data), BIND_READ_BYTES);
  return (chunk) => parser.push(chunk, 0);
}

/** A feed of a gRPC call's body chunks that calls `f` with each message (capture's grpcMessageFeed), bounded as texts are (BIND_READ_BYTES). */
export function grpcFeed(encoding: string | undefined, f: (message: Uint8Array | undefined) => void): (chunk: Buffer) => void {
  return grpcMessageFeed(encoding, BIND_READ_BYTES, f);
}
