// Issued values across the live comparison's batches (docs/shadow.md
// "Sessions: each target's own ids and cookies"). `bb diff` binds a value a
// server issued and its client later sent back over the whole capture
// (diff/bind/bound.ts); the live comparison diffs batches of a few hundred
// exchanges, so a value issued in one batch and sent back in a later one (an
// order created, then read a second later: `POST /orders` → 1042, then
// `GET /orders/1042`, mirrored as `GET /orders/5017`) would not bind, and the
// read's paths, differing only by the ids, would not even pair. Each target's
// counterparts of the primary's values are learned from the batches compared
// so far (the relay's own learning, diff/bind/counterparts.ts: from answers,
// gRPC answers' messages among them, and from the server messages of
// WebSocket conversations); a later
// batch's primary requests that send one back bind it on every side, each
// side its own value, so the read compares as `bb diff` of the captures
// compares it.
import { ClientSends, Counterparts, grpcSentTokens, pathTokens, recordedResponse, requestTokens, sentRequest, tokensOf } from '../../diff/index.js';
import { entryStartMs, messageEpochMs, type HarEntry } from '../../capture/index.js';
import type { TargetName } from './live.js';

/** One exchange's entries on each side, as the comparer groups them. */
type Sides = Partial<Record<TargetName, HarEntry>>;

/** Values bound before a batch, per side. */
export type BoundBefore = Record<TargetName, Set<string>>;

/** Both sets of bound values, side by side (either may be missing). */
export function mergeBound(a: BoundBefore | undefined, b: BoundBefore | undefined): BoundBefore | undefined {
  if (!a || !b) return a ?? b;
  const out: BoundBefore = { primary: new Set(a.primary), candidate: new Set(a.candidate), secondary: new Set(a.secondary) };
  for (const side of ['primary', 'candidate', 'secondary'] as const) for (const v of b[side]) out[side].add(v);
  return out;
}

/** Stream counterparts the relay keeps for a comparison that reads the journals whole, per target, at most (the oldest go first). */
const MAX_KEPT_PAIRS = 100_000;

/**
 * The relay's side: counterparts its open streams' messages taught (message-pairs.ts), handed to the comparison
 * worker at the end of each turn (a read that sends a value back while its stream is still open is compared
 * before the stream's entry is: the worker learns from completed exchanges), and kept, bounded, for a fresh
 * worker that compares the journals whole at the end of a run (drain-watch.ts).
 */
export class StreamCounterparts {
  private readonly kept: Record<'candidate' | 'secondary', Map<string, string>> = { candidate: new Map(), secondary: new Map() };
  private pending: Array<{ side: 'candidate' | 'secondary'; pairs: Array<[string, string]> }> = [];

  /** `post`: to the live worker. */
  constructor(private readonly post: (msg: { type: 'counterparts'; side: 'candidate' | 'secondary'; pairs: Array<[string, string]> }) => void) {}

  /** Pairs a target's stream messages taught. */
  add(side: 'candidate' | 'secondary', pairs: Array<[string, string]>): void {
    const kept = this.kept[side];
    for (const [v, c] of pairs) {
      kept.delete(v);
      kept.set(v, c);
      if (kept.size > MAX_KEPT_PAIRS) kept.delete(kept.keys().next().value!);
    }
    if (this.pending.length === 0) setImmediate(() => this.flush());
    this.pending.push({ side, pairs });
  }

  private flush(): void {
    for (const p of this.pending) this.post({ type: 'counterparts', ...p });
    this.pending = [];
  }

  /** Every pair kept, per target (a whole comparison's spec). */
  all(): Record<'candidate' | 'secondary', Array<[string, string]>> {
    return { candidate: [...this.kept.candidate], secondary: [...this.kept.secondary] };
  }
}

/** Primary values remembered as sent back, at most (the oldest go first). */
const MAX_SENT_BACK = 100_000;

/** The candidate's and the secondary's counterparts of the primary's issued values, over the run. */
export class BatchBinding {
  private readonly targets: Array<{ side: 'candidate' | 'secondary'; values: Counterparts }>;
  /** Primary values with a counterpart that a later request sent back (what `boundFor` binds). */
  private readonly sentBack = new Set<string>();
  /** Made tokens the primary's client sent in a request's path (noteSent): ids by where they stood. */
  private readonly inPath = new Set<string>();
  /**
   * Primary values that are ids by where they stood (sent in a path, or issued in a JSON field whose key says id):
   * with a secondary, a value the primary and the secondary issued alike stays bound when it is one (a fixed
   * product's id), as `bb diff --noise` of the captures keeps it (diff/bind boundAlike).
   */
  readonly ids = { has: (v: string): boolean => this.inPath.has(v) || this.targets.some((t) => t.values.isId(v)) };
  /** When the primary's client first sent each value, by the order its exchanges ended (noteSent). */
  private readonly sends = new ClientSends();
  /** The same by the capture's times (epoch ms: a request's start, a client message's time), for streams' messages. */
  private readonly sendTimes = new ClientSends();

  constructor(secondary: boolean) {
    this.targets = [{ side: 'candidate', values: new Counterparts(true) }, ...(secondary ? [{ side: 'secondary' as const, values: new Counterparts(true) }] : [])];
  }

  /**
   * The values a batch's primary requests send back that earlier batches'
   * answers issued differently per target, each side's own (a side whose
   * answer issued the primary's very value keeps it; no `bound` when none),
   * and those values (`sent`: they are noted as sent back).
   */
  boundBefore(batch: readonly Sides[]): { bound?: BoundBefore; sent: string[] } {
    let bound: BoundBefore | undefined;
    const sent = this.sentWithCounterpart(batch);
    for (const token of sent) {
      bound = this.bindInto(bound, token);
      this.sentBack.delete(token);
      this.sentBack.add(token);
      if (this.sentBack.size > MAX_SENT_BACK) this.sentBack.delete(this.sentBack.values().next().value!);
    }
    return { ...(bound ? { bound } : {}), sent };
  }

  /**
   * As `boundBefore`, for one exchange compared once more (its verdict waited): the values it issued
   * itself (`except`) left out, and nothing noted as sent back.
   */
  boundAgain(g: Sides, except: ReadonlySet<string>): BoundBefore | undefined {
    let out: BoundBefore | undefined;
    for (const token of this.sentWithCounterpart([g])) if (!except.has(token)) out = this.bindInto(out, token);
    return out;
  }

  // The tokens the exchanges' primary requests sent that have a counterpart on some target.
  private sentWithCounterpart(batch: readonly Sides[]): string[] {
    if (this.targets.every((t) => t.values.size === 0)) return [];
    return batch.flatMap((g) => clientSent(g.primary!).all.filter((token) => this.targets.some((t) => t.values.get(token) !== undefined)));
  }

  /**
   * `values` (primary values an earlier answer issued, as `learn` named them) that a request
   * sent back since, bound on every side, each side its own; undefined when none was.
   */
  boundFor(values: Iterable<string>): BoundBefore | undefined {
    let out: BoundBefore | undefined;
    for (const v of values) if (this.sentBack.has(v)) out = this.bindInto(out, v);
    return out;
  }

  // The primary's value and each target's counterpart: its very value where it has none (it issued the primary's
  // value alike, or was sent it from an exchange not mirrored), nothing where it issued none there (its answer
  // failed or lacked the place: its capture never issued the value, so `bb diff` of it binds none).
  private bindInto(out: BoundBefore | undefined, value: string): BoundBefore {
    out ??= { primary: new Set(), candidate: new Set(), secondary: new Set() };
    out.primary.add(value);
    for (const t of this.targets) {
      const theirs = t.values.get(value) ?? (t.values.unlike(value) ? undefined : value);
      if (theirs !== undefined) out[t.side].add(theirs);
    }
    return out;
  }

  /**
   * Notes what a primary exchange's client sent, at `at` (its place in the order the primary's exchanges ended,
   * the captures' file order): a value sent before an answer issued it is the client's own, and `learn` learns
   * no counterpart of it, as `bb diff` of the captures binds none.
   */
  noteSent(primary: HarEntry, at: number): void {
    const c = clientSent(primary);
    this.sends.note(c.all, at);
    for (const t of pathTokens(sentRequest(primary.request))) {
      if (this.inPath.has(t)) continue;
      this.inPath.add(t);
      if (this.inPath.size > MAX_SENT_BACK) this.inPath.delete(this.inPath.values().next().value!);
    }
    const started = entryStartMs(primary);
    if (!Number.isFinite(started)) return;
    this.sendTimes.note(c.request, started);
    for (const m of c.messages) this.sendTimes.note(m.tokens, m.time);
  }

  /** Counterparts the relay learned from stream messages as they crossed (a stream still open when a read sent its value back). */
  teach(side: 'candidate' | 'secondary', pairs: ReadonlyArray<readonly [string, string]>): void {
    const t = this.targets.find((x) => x.side === side);
    if (t) for (const [value, counterpart] of pairs) t.values.teach(value, counterpart);
  }

  /**
   * Learns from a compared batch's answers (after it was compared: a value counts as issued from the
   * next batch on); per exchange, the primary's values it taught a counterpart of (none: undefined). `at`:
   * the exchange's noteSent place (its answer's values the client sent first are not learned).
   */
  learn(batch: ReadonlyArray<Sides & { at?: number }>): Array<Set<string> | undefined> {
    return batch.map((g) => {
      const primary = g.primary!;
      const view = recordedResponse(primary);
      const spoken = serverTexts(primary);
      let ownSaid: ReturnType<typeof clientSaidFirst> | undefined;
      let taught: Set<string> | undefined;
      const note = (values: string[]) => {
        for (const v of values) (taught ??= new Set()).add(v);
      };
      // What its client, or an exchange that ended before it, sent first (noteSent `at`) is the client's own. A
      // stream's messages issued values while it went on, before exchanges that ended earlier, so for a stream it
      // goes by the capture's times, as bb diff orders those: what its own request carried, and what the client
      // sent before the stream began (its answer) or before each message (learnMessage below).
      const at = g.at;
      let own: ((v: string) => boolean) | undefined;
      const asked = streamed(primary) ? new Set(clientSent(primary).request) : undefined;
      const began = entryStartMs(primary);
      if (asked) own = (v) => asked.has(v) || this.sendTimes.before(v, began);
      else if (at !== undefined) own = (v) => this.sends.before(v, at + 1);
      for (const t of this.targets) {
        const mine = g[t.side];
        // No answer from it (an error: not compared): what the primary issued there, it did not.
        if (!mine) {
          t.values.learnNone(view, own);
          continue;
        }
        note(t.values.learn(view, recordedResponse(mine), own));
        // A value a server message issued (a ticket handed over a socket) is sent back later too.
        if (spoken.length === 0) continue;
        const theirs = serverTexts(mine);
        // What the client asked for (the upgrade's query) or said on the socket before the r-th server message is its own (a nick it joined with).
        ownSaid ??= clientSaidFirst(primary);
        const said = ownSaid;
        for (let r = 0; r < Math.min(spoken.length, theirs.length); r++) {
          if (spoken[r] === undefined || theirs[r] === undefined) continue;
          const at = said.serverAt[r]!;
          const time = said.serverTime[r]!;
          note(t.values.learnMessage(r, spoken[r]!, theirs[r]!, (v) => asked?.has(v) === true || (said.first.get(v) ?? Infinity) < at || this.sendTimes.before(v, time)));
        }
      }
      return taught;
    });
  }
}

/** Whether an exchange's answer came as messages (a WebSocket's, an event stream's events, a gRPC call's). */
function streamed(e: HarEntry): boolean {
  return (e._webSocketMessages?.length ?? 0) > 0 || (e._eventSourceMessages?.length ?? 0) > 0 || (e._grpcMessages?.length ?? 0) > 0;
}

/**
 * Where in a conversation the client first said each value (its text messages' tokens, by message index), and
 * where each server data message stands (serverAt[r]: the index of the r-th, as serverTexts numbers them; serverTime[r]:
 * when it crossed, epoch ms).
 */
function clientSaidFirst(e: HarEntry): { first: Map<string, number>; serverAt: number[]; serverTime: number[] } {
  const first = new Map<string, number>();
  for (const m of clientSent(e).messages) for (const t of m.tokens) if (!first.has(t)) first.set(t, m.at);
  const serverAt: number[] = [];
  const serverTime: number[] = [];
  (e._webSocketMessages ?? []).forEach((m, i) => {
    if (m.type === 'receive' && (m.opcode === 1 || m.opcode === 2)) {
      serverAt.push(i);
      serverTime.push(messageEpochMs(m.time));
    }
  });
  return { first, serverAt, serverTime };
}

/** What a primary exchange's client sent, read once per entry (noteSent, boundBefore and learn each ask). */
interface ClientSent {
  /** Its request's tokens (path, query, headers, cookies, body). */
  request: string[];
  /** Its text WebSocket messages' tokens, each with its index among the conversation's messages and its time (epoch ms). */
  messages: Array<{ at: number; time: number; tokens: string[] }>;
  /** Everything it sent: the request's, the messages', its gRPC messages'. */
  all: string[];
}
const clientSentOf = new WeakMap<HarEntry, ClientSent>();

function clientSent(e: HarEntry): ClientSent {
  let c = clientSentOf.get(e);
  if (c) return c;
  const request = requestTokens(sentRequest(e.request));
  const messages: ClientSent['messages'] = [];
  (e._webSocketMessages ?? []).forEach((m, at) => {
    if (m.type === 'send' && m.opcode === 1) messages.push({ at, time: messageEpochMs(m.time), tokens: tokensOf(m.data) });
  });
  const all = [...request, ...messages.flatMap((m) => m.tokens), ...grpcSentTokens(e)];
  clientSentOf.set(e, (c = { request, messages, all }));
  return c;
}

/** A conversation's server data messages in order: text ones as text, binary ones as undefined (they count in the numbering only), as the relay numbers them (mirror-ws.ts). */
function serverTexts(e: HarEntry): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  for (const m of e._webSocketMessages ?? []) if (m.type === 'receive' && (m.opcode === 1 || m.opcode === 2)) out.push(m.opcode === 1 ? m.data : undefined);
  return out;
}

