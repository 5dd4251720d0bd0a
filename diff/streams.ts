// Streams align by identity (docs/diff.md "Streams"): the messages of a
// WebSocket connection or a gRPC call, and the events of an SSE response,
// line up like array items (diff/arrays.ts alignItems): equal first, then the
// identity key of their data, then content similarity, then by place. So a
// reordered stream whose messages also changed is `reordered` rows plus the
// field changes of the moved messages, not a value change at every place.
//
// What is particular to streams: the identity and the content of a message
// are its data (a message's envelope is direction and opcode), and only
// messages of one kind pair past identity: one direction, opcode and
// data.type, as before this alignment.
import { alignItems, identityOf, MIN_SIMILARITY } from './arrays.js';
import type { Lineup } from './pair.js';
import { leavesOf, similarity } from './similarity.js';
import type { NormalizedWsMessage } from './types.js';

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A message's kind: direction, opcode and data.type (the only messages that pair past identity are of one kind). */
export function messageKind(m: NormalizedWsMessage): string {
  const t = isPlain(m.data) && typeof m.data.type === 'string' ? m.data.type : '';
  return `${m.type}|${m.opcode}|${t}`;
}

/** How alignMessages reads one side's messages: a value's token (equal tokens: equal values) and the value it compares by content. */
export interface StreamSide {
  /** The token of a message, or of its identity key's value. */
  token: (side: 0 | 1, v: unknown) => string;
  /** The value compared by content (as rendered for comparing). */
  value: (side: 0 | 1, v: unknown) => unknown;
}

const STATUS = { same: 'paired', paired: 'paired', moved: 'reordered', removed: 'missing', added: 'extra' } as const;

/** Lines up two sequences of messages (one direction, or one connection) by alignItems's stages; places are indices into `a` and `b`. */
export function alignMessages(a: readonly NormalizedWsMessage[], b: readonly NormalizedWsMessage[], read: StreamSide, keys: readonly string[]): Lineup[] {
  const id = (side: 0 | 1) => (m: NormalizedWsMessage) => {
    const key = identityOf(read.value(side, m.data), keys, (v) => read.token(side, v));
    return key === undefined ? undefined : `${messageKind(m)}|${key}`;
  };
  const ta = a.map((m) => read.token(0, m));
  const tb = b.map((m) => read.token(1, m));
  const ida = a.map(id(0));
  const idb = b.map(id(1));
  if (changedInPlace(a, b, ta, tb, ida, idb, read)) return a.map((_, i) => ({ old: i, new: i, status: 'paired' }));
  const lineup = alignItems(ta, tb, ida, idb, false, {
    old: a.map((m) => read.value(0, m.data)),
    new: b.map((m) => read.value(1, m.data)),
    oldKind: a.map(messageKind),
    newKind: b.map(messageKind),
  });
  return lineup.map((l) => ({ ...(l.old !== undefined ? { old: l.old } : {}), ...(l.new !== undefined ? { new: l.new } : {}), status: STATUS[l.status] }));
}

/**
 * Whether two runs of messages changed in place, each message where it was: as many on each side, every place of
 * one kind, at least MIN_SIMILARITY alike, none named by an identity key, and the new messages not the old ones
 * in another order. A counter off by one in every message, or an echo that doubles what it is sent, then pairs by
 * place; aligned by equal content first, [1, 2, 3] → [2, 3, 4] read as the first message moved to the end.
 */
function changedInPlace(a: readonly NormalizedWsMessage[], b: readonly NormalizedWsMessage[], ta: readonly string[], tb: readonly string[], ida: ReadonlyArray<string | undefined>, idb: ReadonlyArray<string | undefined>, read: StreamSide): boolean {
  if (a.length !== b.length || a.length < 2) return false;
  if (ida.some((x) => x !== undefined) || idb.some((x) => x !== undefined)) return false;
  for (let i = 0; i < a.length; i++) if (messageKind(a[i]!) !== messageKind(b[i]!)) return false;
  // The same messages reordered are moves.
  const left = new Map<string, number>();
  for (const t of ta) left.set(t, (left.get(t) ?? 0) + 1);
  let permutation = true;
  for (const t of tb) {
    const n = left.get(t) ?? 0;
    if (n === 0) {
      permutation = false;
      break;
    }
    left.set(t, n - 1);
  }
  if (permutation) return false;
  for (let i = 0; i < a.length; i++) {
    const x = leavesOf(read.value(0, a[i]!.data));
    const y = leavesOf(read.value(1, b[i]!.data));
    if (!x || !y || similarity(x, y) < MIN_SIMILARITY) return false;
  }
  return true;
}

/** True for the array at `path` that holds an SSE response's events (diff/normalize/bodies.ts). */
export function isEventStream(path: string): boolean {
  return path === 'response.events';
}

/**
 * An SSE event's identity: its event name and its data's identity key. The
 * event's `id:` line is the stream's resume cursor (Last-Event-ID, WHATWG
 * HTML §9.2), a place in the stream rather than a name of what the event
 * carries, so it is compared as content, never paired on.
 */
export function eventIdentity(event: unknown, keys: readonly string[], tokenOf: (v: unknown) => string): string | undefined {
  if (!isPlain(event)) return undefined;
  const key = identityOf(event.data, keys, tokenOf);
  return key === undefined ? undefined : `${String(event.event)}|${key}`;
}
