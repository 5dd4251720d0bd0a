// One target's answers still to come, for the read-after-write wait across
// connections (docs/shadow.md "Sessions: each target's own ids and
// cookies"). A browser creates an order on one connection and reads it on
// another at once; the primary answered the creation, but the target's own
// answer (its own order number, what the relay binds the read to) may still
// be on its way, a slow candidate's above all: the read would reach it with
// the primary's number. So a request that carries a value the primary's
// answer to another lane's exchange issued waits until the target answered
// that exchange too (or CATCH_UP_MS at most: message-pairs.ts, which holds
// the waits). Requests of one lane are in order already; a request that
// carries no such value waits for nothing. The primary's answers are read
// for their values only when a request could wait on them, and only once.
import { madeNotWord, responseValues, type ResponseView } from '../../diff/index.js';

interface Unanswered {
  /** The client connection (lane) it went on. */
  lane: string;
  /** The primary's answer, once the tee decoded it. */
  primary?: ResponseView;
  /** The values that answer issued (read when first asked). */
  values?: ReadonlySet<string>;
}

/** Exchanges mirrored to one target whose answer has not come, by shared id. */
export class AnswersAwaited {
  private readonly open = new Map<number, Unanswered>();

  /** An exchange handed to the target on `lane`. */
  sent(id: number, lane: string): void {
    this.open.set(id, { lane });
  }

  /** The primary's answer to an exchange (decoded by the tee once the client had it). */
  primaryAnswered(id: number, view: ResponseView): void {
    const u = this.open.get(id);
    if (u) u.primary = view;
  }

  /** The target answered (or failed) an exchange. */
  answered(id: number): void {
    this.open.delete(id);
  }

  /** Whether the target's answer to an exchange is still to come. */
  has(id: number): boolean {
    return this.open.has(id);
  }

  /** The exchanges of other lanes (any with `lane` undefined) whose primary answer issued one of `tokens`, while the target's is still to come. */
  behind(tokens: () => ReadonlySet<string>, lane?: string): number[] | undefined {
    let out: number[] | undefined;
    let made: string[] | undefined;
    for (const [id, u] of this.open) {
      if (!u.primary || u.lane === lane) continue;
      // Words never bind (bound.ts madeNotWord); a token the answer's text does not hold is not one of its values.
      made ??= [...tokens()].filter(madeNotWord);
      const candidates = made.filter((t) => holds(u.primary!, t));
      if (candidates.length === 0) continue;
      u.values ??= new Set(responseValues(u.primary).map((v) => v.value));
      if (candidates.some((t) => u.values!.has(t))) (out ??= []).push(id);
    }
    return out;
  }
}

/**
 * Whether a response's text, events, header values or gRPC messages may hold `token` (a quick test before reading
 * its values; a gRPC message's integer is a varint, not text, so a message always may).
 */
function holds(view: ResponseView, token: string): boolean {
  return (view.text?.includes(token) ?? false) || view.headers.some((h) => h.value.includes(token)) || (view.events?.some((e) => e.includes(token)) ?? false) || (view.eventIds?.some((e) => e.includes(token)) ?? false) || (view.grpc?.some((m) => m !== undefined) ?? false);
}
