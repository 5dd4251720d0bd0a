// When an exchange of a HAR ended. A WebSocket entry's `time` is its
// handshake's (the upgrade's response); the conversation goes on until its
// last message or its close, and a capture writes the entry when it closed.
// Binding (diff/bind/bound.ts) and replay's plan (scenario/replay/plan.ts)
// both need the conversation's end, not the handshake's.
import { toEpochSeconds } from '../core/index.js';
import type { HarEntry } from './har.js';

/** A message's time (HAR: epoch seconds; Playwright writes epoch ms) in epoch ms. */
export const messageEpochMs = (time: number): number => toEpochSeconds(time) * 1000;

/**
 * When an exchange started (epoch ms): bb's `_bb.started` with its µs where it agrees with `startedDateTime` (the
 * same millisecond: an edited start wins), else `startedDateTime`'s millisecond. NaN when neither is a date. A
 * request that started within the millisecond a stream's message crossed in is before or after it by this.
 */
export function entryStartMs(e: HarEntry): number {
  const ms = Date.parse(e.startedDateTime);
  const fine = e._bb?.started;
  return typeof fine === 'number' && Math.trunc(fine) === ms ? fine : ms;
}

/**
 * When an exchange ended (epoch ms; `startMs`: its start, read from the entry when not given): its start and its
 * time, and for a WebSocket the later of that, its last message and its close. NaN when the start is not a date.
 */
export function exchangeEndMs(e: HarEntry, startMs = entryStartMs(e)): number {
  let end = startMs + Math.max(0, e.time || 0);
  for (const m of e._webSocketMessages ?? []) end = Math.max(end, messageEpochMs(m.time));
  const closed = e._bb?.close?.time;
  if (typeof closed === 'number' && closed > 0) end = Math.max(end, messageEpochMs(closed));
  return end;
}
