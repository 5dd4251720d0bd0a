// Which issued values bind, for `bb diff` (docs/diff.md "Issued values"):
// along one capture's timeline, a value the server issued first (issued.ts:
// a JSON field, a header such as Location, a Set-Cookie value, an SSE event or
// a server WebSocket message field, a gRPC message's string or integer
// field, never prose) that the client later sent back (path, query, header,
// cookie, JSON or form body, client WebSocket or gRPC message) is bound,
// whatever its shape. A value the client sent before any
// server issued it is the client's own (a route word, its host, a name it
// typed) and never binds: that is replay's rule (scenario/replay/correlate.ts).
//
// The diff marks every occurrence of a bound value (markIssued) as an ordinal
// of class ISSUED, so what follows is the ordinal machinery's: pairing sees
// `<ISSUED>` (entries whose paths differ only by bound values pair), and the
// compare loop numbers old and new values met at the same aligned place alike
// (correspond.ts): X ↔ Y compares equal, and a value that breaks its binding
// (X ↔ Y here, X ↔ Z there) renders as another number, a real `changed`.
//
// The timeline is file order: bb writes an entry when it completes, so an
// entry whose request carries a value comes after the one whose response
// issued it; browsers' HARs list entries as they started. Both stores read
// the same order, so the in-memory and the bounded path bind alike.
import { entryStartMs, exchangeEndMs, messageEpochMs, type HarEntry } from '../../capture/index.js';
import { TokenFilter } from './token-filter.js';
import { eachMessageValue, eachProtoValue, eachResponseValue, grpcMessageBytes, madeNotWord, placeSaysQuantity, protoTokens, recordedResponse, pathTokens, requestTokens, responseValues, rewriteTokens, sentRequest, tokensOf } from './issued.js';

/** The ordinal class bound values are marked as (`<ISSUED:n>`). */
export const ISSUED_CLASS = 'ISSUED';

/** Distinct values the client sends that one timeline remembers: captured content is hostile input (past it, new values are not followed). */
const MAX_VALUES = 1_000_000;

/** Stream entries held at once while the walk is among exchanges that may have started after their messages (the oldest go past it). */
const MAX_HELD_STREAMS = 64;
/** Values one held stream's server messages issued, remembered at most (captured content is hostile input). */
const MAX_STREAM_VALUES = 100_000;

/**
 * An exchange whose server spoke in messages that carry their time (a
 * WebSocket's, an event stream's events, a gRPC call's messages), held
 * while the walk goes back through exchanges that ended after its first
 * message: one of them that started after a message may have sent back what
 * the message issued, though it comes earlier in the file (it ended first).
 */
interface HeldStream {
  /** The entry, read when first asked; a shadow primary's not-mirrored stream comes with its values read (ExchangeSteps). */
  entry?: HarEntry;
  /** When its first server message crossed (epoch ms). */
  first: number;
  /** Value → when a server message of it first issued it (epoch ms); read when first asked. */
  values?: Map<string, number>;
}

/**
 * One capture's timeline read from its last entry back to its first. A value
 * binds when the server issued it before the client first sent it, and the
 * client sent it after (what a walk in file order finds: issued, then sent
 * back). Read backwards, only the values the client sends are remembered,
 * each with whether an issue of it was met before its next send: a value the
 * client never sends needs no memory, and most of what a server issues is
 * never sent back (a set of every issued value was the largest cost of
 * binding, in the diff bench).
 *
 * File order is the order exchanges ended, so a stream still open when the
 * client sent back a value one of its messages issued (a ticket in an
 * event, read on another connection while the stream goes on) comes after
 * that read. Such a send counts as after the issue by the times the capture
 * holds: the request's start, each message's time (HeldStream).
 *
 * A mirror capture of `bb shadow` lacks the primary's exchanges it did not
 * mirror, though the same client sent them (`primary`, PrimarySends): each
 * is read where it stood in the primary's order, what its client sent and
 * what the primary issued, as on the primary's side and in the live
 * comparison. A name the client signed up with in a POST that went to the
 * primary alone stays its own; an id that POST's answer issued, read back
 * by a mirrored GET, binds here too.
 */
export class IssuedTimeline {
  /** Per value the client sends (read so far, going back): true when the server issued it before the client's first send of it after here. */
  private readonly next = new Map<string, boolean>();
  /** Every key of `next`: most tokens asked about are passed over without a look-up in it. */
  private readonly sentFilter = new TokenFilter();
  /** Streams read so far whose first server message came before the last exchange read ended. */
  private held: HeldStream[] = [];
  /** The primary's order (shared id → place) and the next not-mirrored exchange to read, from the last (a mirror capture's timeline). */
  private readonly place?: Map<number, number>;
  private notMirrored = -1;

  /** With `ids`: made tokens the client sent in a request's path, and values the server issued under an id key (boundIds). */
  private readonly idLike?: Set<string>;

  /**
   * `ids`: also note which values are ids by where they stood (boundIds): sent in a request's path, or issued under a
   * key that says id. A second run's alike values keep those bound (boundAlike).
   */
  constructor(
    private readonly primary?: PrimarySends,
    ids = false,
  ) {
    if (ids) {
      const idLike = (this.idLike = new Set<string>());
      this.sink.pathSent = (tokens) => {
        for (const t of tokens) if (idLike.size < MAX_VALUES) idLike.add(t);
      };
      // Only what the client sends later (it is in `next`) can be bound: the rest is not kept.
      this.sink.idKeyed = (v) => {
        if (idLike.size < MAX_VALUES && this.next.has(v)) idLike.add(v);
      };
    }
    if (!primary) return;
    this.place = new Map(primary.ids.map((id, i) => [id, i]));
    this.notMirrored = primary.notMirrored.length - 1;
  }

  // Words never bind, so the map never keeps them. `at`: when the client sent them (epoch ms; NaN when unknown).
  private sent(tokens: readonly string[], at: number): void {
    for (const t of tokens) {
      if (!madeNotWord(t)) continue;
      if (this.next.has(t) || this.next.size < MAX_VALUES) {
        this.next.set(t, this.held.length > 0 && this.heldIssuedBefore(t, at));
        this.sentFilter.add(t);
      }
    }
  }

  // Whether a held stream's server message issued `value` before `at`.
  private heldIssuedBefore(value: string, at: number): boolean {
    for (const s of this.held) {
      if (!(s.first < at)) continue;
      s.values ??= streamValues(s.entry!);
      const when = s.values.get(value);
      if (when !== undefined && when < at) return true;
    }
    return false;
  }

  // Only a value the client sends later can bind: the rest is not looked up past the map.
  private readonly issue = (v: string): void => {
    if (this.sentFilter.mayHave(v) && this.next.has(v)) this.next.set(v, true);
  };

  // Issuing changes only a value the client sends later that no issue was met for yet: strings
  // holding none are passed over before their prose test (the extractor asks, issued.ts).
  private readonly wants = (v: string): boolean => this.sentFilter.mayHave(v) && this.next.get(v) === false;

  // Where readBack hands an entry's parts (made once, after the two above: addBefore is the diff's hot path).
  private readonly sink: PartSink = { issue: this.issue, wants: this.wants, issuing: () => this.next.size > 0, sent: (tokens, at) => this.sent(tokens, at) };

  /** Reads the entry before the last one read: its WebSocket or gRPC messages last to first, its response, then its request. */
  addBefore(e: HarEntry): void {
    // Times are read only while a stream is held or for one (most exchanges of most captures need none).
    const messages = e._webSocketMessages !== undefined || e._eventSourceMessages !== undefined || e._grpcMessages !== undefined;
    // The primary's exchanges not mirrored that ended after this one, first. A mirror's socket or event stream
    // is written when the target's ended, which may be long after its primary's place (later entries do not
    // wait for it): it is read where it stands and moves the primary's order on no further.
    if (this.place && e._webSocketMessages === undefined && e._eventSourceMessages === undefined) {
      const id = e._bb?.shadow?.id;
      const at = typeof id === 'number' ? this.place.get(id) : undefined;
      if (at !== undefined) this.notMirroredAfter(at);
    }
    const start = this.held.length || messages ? entryStartMs(e) : NaN;
    const end = exchangeEndMs(e, start);
    // A held stream whose first message came after this exchange ended issued nothing this one or any before it sent.
    if (this.held.length) this.held = this.held.filter((s) => s.first < end);
    readBack(e, start, this.sink);
    this.boundThroughPrimary(e);
    const first = messages ? firstServerMessage(e) : undefined;
    if (first !== undefined && first < end) this.hold({ entry: e, first });
  }

  // A mirror's answer at a place where the primary's issued a value its client sent back only in a not-mirrored
  // exchange (PrimarySends.boundAt): the mirror's own value there is what that send stood for, so it binds.
  private boundThroughPrimary(e: HarEntry): void {
    const id = e._bb?.shadow?.id;
    const places = typeof id === 'number' ? this.primary?.boundAt?.get(id) : undefined;
    if (!places) return;
    for (const { place, value } of responseValues(recordedResponse(e))) {
      if (!places.has(place) || !madeNotWord(value) || placeSaysQuantity(place)) continue;
      this.next.set(value, true);
      this.sentFilter.add(value);
    }
  }

  private hold(s: HeldStream): void {
    this.held.push(s);
    if (this.held.length > MAX_HELD_STREAMS) this.held.shift();
  }

  // Reads the not-mirrored exchanges whose place in the primary's order is after `at`, from the last, as addBefore reads an entry.
  private notMirroredAfter(at: number): void {
    const list = this.primary!.notMirrored;
    for (; this.notMirrored >= 0 && list[this.notMirrored]!.at > at; this.notMirrored--) {
      const x = list[this.notMirrored]!.exchange;
      if (this.held.length) this.held = this.held.filter((s) => s.first < x.end);
      for (const step of x.steps) {
        if (step.sent) this.sent(step.sent, step.at);
        else for (const v of step.issued) this.issue(v);
      }
      // A stream still going on when exchanges before it in the file started: held, as addBefore holds a recorded one.
      if (x.stream) this.hold({ first: x.stream.first, values: x.stream.values });
    }
  }

  /** Of `bound`, the ids by where they stood (with `ids`; else none): sent in a request's path, issued under an id key. */
  boundIds(bound: ReadonlySet<string>): Set<string> {
    const out = new Set<string>();
    for (const v of this.idLike ?? []) if (bound.has(v)) out.add(v);
    return out;
  }

  /** Values the server issued and the client later sent back (once every entry was read). */
  get bound(): Set<string> {
    // Not-mirrored exchanges before this capture's first entry.
    if (this.primary) this.notMirroredAfter(-1);
    const out = new Set<string>();
    for (const [v, issuedFirst] of this.next) if (issuedFirst) out.add(v);
    return out;
  }
}

/** When an entry's first timed server message crossed (epoch ms): a WebSocket's text message, an event, a gRPC message; undefined when it has none. */
function firstServerMessage(e: HarEntry): number | undefined {
  let first = Infinity;
  for (const m of e._webSocketMessages ?? []) if (m.type === 'receive' && m.opcode === 1) first = Math.min(first, messageEpochMs(m.time));
  for (const m of e._eventSourceMessages ?? []) if (m.time > 0) first = Math.min(first, messageEpochMs(m.time));
  for (const m of e._grpcMessages ?? []) if (m.type === 'receive') first = Math.min(first, messageEpochMs(m.time));
  return Number.isFinite(first) ? first : undefined;
}

/**
 * What a stream's server messages issued, each value with when it was first issued (epoch ms), up to
 * MAX_STREAM_VALUES. A value its client sent on the stream before a server message issued it is the client's
 * own (a name it joined a chat with, echoed back): left out.
 */
function streamValues(e: HarEntry): Map<string, number> {
  const out = new Map<string, number>();
  const own = new Set<string>();
  const at = (time: number) => (v: string) => {
    if (!out.has(v) && !own.has(v) && out.size < MAX_STREAM_VALUES) out.set(v, time);
  };
  const sent = (tokens: readonly string[]) => {
    for (const t of tokens) if (own.size < MAX_STREAM_VALUES && !out.has(t)) own.add(t);
  };
  for (const m of e._webSocketMessages ?? []) {
    if (m.opcode !== 1) continue;
    if (m.type === 'receive') eachMessageValue(m.data, at(messageEpochMs(m.time)));
    else sent(tokensOf(m.data));
  }
  for (const m of e._eventSourceMessages ?? []) if (m.time > 0) eachMessageValue(m.data, at(messageEpochMs(m.time)));
  for (const m of e._grpcMessages ?? []) {
    const bytes = grpcMessageBytes(m);
    if (!bytes) continue;
    if (m.type === 'receive') eachProtoValue(bytes, at(messageEpochMs(m.time)));
    else sent(protoTokens(bytes));
  }
  return out;
}

/** A capture's bound values and, when asked, which of them are ids by where they stood (IssuedTimeline `ids`). */
export interface BoundSet {
  values: ReadonlySet<string>;
  ids?: ReadonlySet<string>;
}

/** The bound values of a capture's entries (in file order; read from the last); `primary`: as IssuedTimeline's, for a mirror capture of `bb shadow`. */
export function boundValues(entries: readonly HarEntry[], primary?: PrimarySends): Set<string> {
  return boundSet(entries, primary, false).values as Set<string>;
}

/** As boundValues, with which are ids when `ids` says so. */
export function boundSet(entries: readonly HarEntry[], primary: PrimarySends | undefined, ids: boolean): BoundSet {
  const t = new IssuedTimeline(primary, ids);
  for (let i = entries.length - 1; i >= 0; i--) t.addBefore(entries[i]!);
  const values = t.bound;
  return { values, ...(ids ? { ids: t.boundIds(values) } : {}) };
}

/**
 * A side's bound values but those two runs of one build issued alike (PairFacts.unbound: a price or a page size
 * the client echoed is the build's answer, not a value it made up, and compares as it is).
 */
export function boundExcept(bound: ReadonlySet<string>, unbound: ReadonlySet<string> | undefined): ReadonlySet<string> {
  if (!unbound?.size) return bound;
  const out = new Set<string>();
  for (const v of bound) if (!unbound.has(v)) out.add(v);
  return out;
}

/**
 * Values issued and sent back alike in two runs (PairFacts.unbound): what both bound sets hold, but the ids among
 * them by where either run had them (BoundSet.ids: sent in a request's path, issued under an id key): an id of fixed
 * data (`GET /products/3001`, `{"id": 3001}`), which the new build may number otherwise and still serve alike, keeps
 * its binding (the entries pair through it, and it compares through it).
 */
export function boundAlike(a: BoundSet, b: BoundSet): Set<string> {
  const [small, large] = a.values.size <= b.values.size ? [a.values, b.values] : [b.values, a.values];
  const out = new Set<string>();
  for (const v of small) if (large.has(v) && !a.ids?.has(v) && !b.ids?.has(v)) out.add(v);
  return out;
}

/** A percent-escape of a base64 character (`+`, `/`, `=`). */
const ENCODED_BASE64_CHAR = /%(?:2[BbFf]|3[Dd])/;

/** Bound values at most this many are looked for by substring (boundAbsent); more, and every string goes through markIssued. */
const FEW_BOUND = 16;

/**
 * A quick test that a string holds none of a few bound values, so markIssued
 * would return it unchanged (a value can only be met whole, or as a whole
 * token, where it is a substring). Undefined when there are too many values
 * for it to pay. Most captures bind few values, and markIssued's tokenizing
 * walk over every normalized string was ~3 % of a bounded diff worker (issue 39).
 */
export function boundAbsent(bound: ReadonlySet<string>): ((s: string) => boolean) | undefined {
  if (bound.size > FEW_BOUND) return undefined;
  const values = [...bound];
  // A base64 value may stand in a text percent-encoded (a URL's query), where markIssued finds it too (base64Runs).
  const encodable = values.some((v) => /[+/=]/.test(v));
  return (s) => {
    if (encodable && ENCODED_BASE64_CHAR.test(s)) return false;
    for (const v of values) if (s.includes(v)) return false;
    return true;
  };
}

/** A string with every bound value in it (the whole string, or a whole token) replaced by `mark(value)`. */
export function markIssued(s: string, bound: ReadonlySet<string>, mark: (value: string) => string): string {
  // A whole value first: a cookie value ("a/b+c==") is bound whole, not token by token.
  if (bound.has(s)) return mark(s);
  // The mark is written as it is, even where the value was percent-encoded.
  return rewriteTokens(s, { get: (t) => (bound.has(t) ? mark(t) : undefined) }, (marked) => marked).text;
}

/**
 * An exchange as a timeline reads it, from its end back (IssuedTimeline.addBefore's order): each step what the
 * server issued (every value: which ones the client sends later is not known yet) or what the client sent (made
 * values only: words never bind) and when (epoch ms); and when the exchange ended.
 */
export interface ExchangeSteps {
  end: number;
  steps: Array<{ issued: string[]; sent?: undefined } | { sent: string[]; at: number }>;
  /** A stream whose first server message crossed before it ended: that time, and what its server messages issued, each value when first. */
  stream?: { first: number; values: Map<string, number> };
}

/**
 * A `bb shadow` run's primary capture as a mirror capture's binding reads it: the shared id of each of its
 * entries in file order, and each exchange the shadow did not mirror, by its place in that order (`at`, an
 * index of `ids`). What the client sent there is its own on every side (a name it signed up with); what the
 * primary issued there and the client sent back is bound on every side (an id a POST created, read by a
 * mirrored GET: the relay sent the primary's value to each target). Bounded: past MAX_NOT_MIRRORED_VALUES
 * values in all, later such exchanges are not kept.
 */
export interface PrimarySends {
  ids: number[];
  notMirrored: Array<{ at: number; exchange: ExchangeSteps }>;
  /**
   * Mirrored exchanges (by shared id) whose answer issued a value the client sent back only in a not-mirrored
   * exchange after it: the places of those values in the answer (responseValues' places). The mirror's answer at
   * the same place holds its own value, which the client's send stood for (the relay's counterpart): bound on the
   * mirror's side too, as the live comparison binds it.
   */
  boundAt?: Map<number, Set<string>>;
}

/** Values kept of the not-mirrored exchanges, at most (captured content is hostile input). */
const MAX_NOT_MIRRORED_VALUES = 1_000_000;

/**
 * A `bb shadow` primary's PrimarySends, read from its entries in file order (`entries` gives them, once per pass):
 * its shared ids and not-mirrored exchanges, then, only when one of those sent something back, a second pass for
 * where mirrored answers issued it (PrimarySends.boundAt).
 */
export async function readPrimarySends(entries: () => Iterable<HarEntry> | AsyncIterable<HarEntry>): Promise<PrimarySends> {
  const reader = new PrimarySendsReader();
  for await (const e of entries()) reader.add(e);
  const lastSent = new Map<string, number>();
  for (const { at, exchange } of reader.sends.notMirrored) for (const step of exchange.steps) for (const t of step.sent ?? []) lastSent.set(t, Math.max(at, lastSent.get(t) ?? -1));
  if (lastSent.size === 0) return reader.sends;
  let at = 0;
  for await (const e of entries()) {
    const tag = e._bb?.shadow;
    if (typeof tag?.id !== 'number') continue;
    const place = at++;
    if (typeof tag.skipped === 'string') continue;
    // Sent back later, in an exchange not mirrored. Answers holding none such are passed over without building places.
    const later = (v: string) => (lastSent.get(v) ?? -1) > place;
    const res = recordedResponse(e);
    let any = false;
    eachResponseValue(res, (v) => (any ||= later(v)), later);
    if (!any) continue;
    const places = new Set(responseValues(res).filter((x) => later(x.value) && !placeSaysQuantity(x.place)).map((x) => x.place));
    if (places.size) (reader.sends.boundAt ??= new Map()).set(tag.id, places);
  }
  return reader.sends;
}

/** The first pass of readPrimarySends: shared ids and not-mirrored exchanges, entry by entry in file order. */
class PrimarySendsReader {
  readonly sends: PrimarySends = { ids: [], notMirrored: [] };
  private values = 0;

  add(e: HarEntry): void {
    const tag = e._bb?.shadow;
    if (typeof tag?.id !== 'number') return;
    this.sends.ids.push(tag.id);
    if (typeof tag.skipped !== 'string' || this.values >= MAX_NOT_MIRRORED_VALUES) return;
    const exchange = exchangeSteps(e);
    for (const step of exchange.steps) this.values += (step.sent ?? step.issued).length;
    this.values += exchange.stream?.values.size ?? 0;
    this.sends.notMirrored.push({ at: this.sends.ids.length - 1, exchange });
  }
}

/** An entry's steps, as readBack hands them over. */
function exchangeSteps(e: HarEntry): ExchangeSteps {
  const start = entryStartMs(e);
  const steps: ExchangeSteps['steps'] = [];
  readBack(e, start, {
    issue: (v) => {
      const last = steps.at(-1);
      if (last && !last.sent) last.issued.push(v);
      else steps.push({ issued: [v] });
    },
    issuing: () => true,
    sent: (tokens, at) => {
      const made = tokens.filter(madeNotWord);
      if (made.length) steps.push({ sent: made, at });
    },
  });
  const end = exchangeEndMs(e, start);
  const first = e._webSocketMessages !== undefined || e._eventSourceMessages !== undefined || e._grpcMessages !== undefined ? firstServerMessage(e) : undefined;
  return { end, steps, ...(first !== undefined && first < end ? { stream: { first, values: streamValues(e) } } : {}) };
}

/** Where readBack hands an exchange's parts. */
interface PartSink {
  /** A value a server part issued; `wants` is asked first, when given (extractors skip what it refuses). */
  issue(value: string): void;
  wants?: (value: string) => boolean;
  /** false: what the response and gRPC server messages issued is not read (nothing could bind now). */
  issuing(): boolean;
  /** Tokens the client sent, and when (epoch ms; the request's is `start` as given). */
  sent(tokens: string[], at: number): void;
  /** When given: the made tokens of each request's path (pathTokens: a REST resource's id, `/products/1001`). */
  pathSent?: (tokens: string[]) => void;
  /** When given: each value a response's JSON issued under a key that says it is an id. */
  idKeyed?: (value: string) => void;
}

/**
 * Reads an exchange from its end back, as a timeline reads it: its WebSocket or gRPC messages last to
 * first, its response, then its request (sent at `start`).
 */
function readBack(e: HarEntry, start: number, sink: PartSink): void {
  const ms = e._webSocketMessages ?? [];
  for (let k = ms.length - 1; k >= 0; k--) {
    const m = ms[k]!;
    // A server's binary and control frames only count in its message numbering, which binding does not need.
    if (m.opcode !== 1) continue;
    if (m.type === 'receive') eachMessageValue(m.data, sink.issue, sink.wants);
    else sink.sent(tokensOf(m.data), messageEpochMs(m.time));
  }
  // A gRPC call's messages cross in turn (a bidi call's client may send back what the server's last message issued).
  const gs = e._grpcMessages ?? [];
  for (let k = gs.length - 1; k >= 0; k--) {
    const bytes = grpcMessageBytes(gs[k]!);
    if (!bytes) continue;
    if (gs[k]!.type === 'receive') {
      if (sink.issuing()) eachProtoValue(bytes, sink.issue, sink.wants);
    } else sink.sent(protoTokens(bytes), messageEpochMs(gs[k]!.time));
  }
  // The response's headers and body (a gRPC call's messages were read above, in their turn).
  if (sink.issuing()) {
    const view = recordedResponse(e);
    eachResponseValue(e._grpcMessages ? { headers: view.headers } : view, sink.issue, sink.wants, sink.idKeyed);
  }
  const req = sentRequest(e.request);
  sink.sent(requestTokens(req), start);
  sink.pathSent?.(pathTokens(req));
}
