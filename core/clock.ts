// bb's one clock and its time conversions. Facts carry epoch milliseconds
// with sub-millisecond precision; HAR writes ISO strings for entries and
// epoch seconds for WebSocket and SSE messages.

/** Epoch milliseconds with sub-millisecond precision. */
export type EpochMs = number;

/** The clock facts use: epoch ms with sub-ms precision, monotonic within the process. */
export function now(): EpochMs {
  return performance.timeOrigin + performance.now();
}

/** Epoch seconds of an ISO 8601 time (offsets honoured); NaN when it is not one. */
export function isoToSeconds(iso: string): number {
  return Date.parse(iso) / 1000;
}

/**
 * Epoch seconds from a WebSocket/SSE `time`: Chrome and bb write seconds,
 * Playwright writes milliseconds. Anything past year 5138 in seconds
 * (1e11) is taken as milliseconds.
 */
export function toEpochSeconds(time: number): number {
  return time > 1e11 ? time / 1000 : time;
}
