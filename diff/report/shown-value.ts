// How one compared value reads in a report (text, HTML, JUnit): its JSON,
// except where the field says what a number means. A gRPC status reads as
// its name and code, `NOT_FOUND (5)`, so `NOT_FOUND (5) → INVALID_ARGUMENT (3)`
// needs no table to read; --json keeps the number.
import { grpcStatusName } from '../../capture/index.js';

/** A value as report text: `∅` for none, a gRPC status (field `grpc.status`) as `NOT_FOUND (5)`, else its JSON. */
export function shownValue(v: unknown, path = ''): string {
  if (v === undefined) return '∅';
  if (path === 'grpc.status' && typeof v === 'number') {
    const name = grpcStatusName(v);
    if (name) return `${name} (${v})`;
  }
  return JSON.stringify(v) ?? String(v);
}
