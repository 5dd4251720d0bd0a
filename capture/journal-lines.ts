// The hottest journal records as JSON text, written by hand: every exchange
// makes a start, a request end, a response start and a done record, and
// JSON.stringify of their objects (built only to be serialized) was ~5 µs of
// a small exchange (bench/profiles/README.md). Each function returns exactly
// the text JSON.stringify writes for that record (same keys, same order,
// optional keys left out when absent); strings and header lists go through
// JSON.stringify, numbers are whole or finite floats and print as JSON does.
import type { DoneRecord, RequestEndRecord, ResponseStartRecord, StartRecord } from './journal.js';

const str = JSON.stringify;

/** A StartRecord's line. */
export function startLine(r: Omit<StartRecord, 'r'>): string {
  let line = `{"r":"start","x":${r.x},"seq":${r.seq},"c":${str(r.c)},"ts":${r.ts},"scheme":${str(r.scheme)},"method":${str(r.method)}`;
  line += `,"target":${str(r.target)},"v":${str(r.v)},"h":${str(r.h)},"up":${str(r.up)},"upg":${r.upg}`;
  if (r.page !== undefined) line += `,"page":${str(r.page)}`;
  if (r.sid !== undefined) line += `,"sid":${r.sid}`;
  if (r.push !== undefined) line += `,"push":${r.push}`;
  return line + '}';
}

/** A RequestEndRecord's line. */
export function requestEndLine(r: Omit<RequestEndRecord, 'r'>): string {
  return `{"r":"qe","x":${r.x},"ts":${r.ts},"tr":${str(r.tr)}}`;
}

/** A ResponseStartRecord's line. */
export function responseStartLine(r: Omit<ResponseStartRecord, 'r'>): string {
  return `{"r":"rs","x":${r.x},"ts":${r.ts},"st":${r.st},"sm":${str(r.sm)},"v":${str(r.v)},"h":${str(r.h)}}`;
}

/** A DoneRecord's line. */
export function doneLine(r: Omit<DoneRecord, 'r'>): string {
  return `{"r":"done","x":${r.x},"ts":${r.ts},"seq":${r.seq},"tr":${str(r.tr)}}`;
}
