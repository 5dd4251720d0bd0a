// Bodies past the body cap, as compared (issue 37 item 6; docs/diff.md "What
// is compared"). A capture keeps a body's first bytes up to its cap and
// records the size and a hash of the rest (`_bb.restHash`, capture/rest-hash.ts).
// Two such bodies compare by what was kept (the prefix, normalized as any
// body), the whole size and the rest hash, when both were cut at the same
// byte and hashed the same way; else, as before hashes existed, the body is
// not compared. The bytes past the cap compare exactly: no rule can see them.
// A difference there is one finding saying so (`….truncated.hash`), never the
// two hashes as values. Messages past those a capture lists (normalize/unlisted.ts)
// are shown the same way: a count, and a digest that says one differs.
import { restHashScheme, type HarEntry, type HarRequest, type HarResponse } from '../capture/index.js';
import { pairValue } from '../core/index.js';
import type { NormalizedEntry, PastCap, Unlisted } from './types.js';

/** A difference row before it is named (compare.ts's). */
interface PathRow { kind?: string; path: string; old?: unknown; new?: unknown }

/**
 * What a cut body compares as past the cap, or undefined when it is not cut
 * or cannot be compared so: no rest hash (recorded before bb hashed, or a
 * message the tap cut before the cap did), or a content-coded body (the same
 * content compressed by another encoder is other bytes; docs/capture-format.md).
 */
export function pastCap(side: HarRequest | HarResponse, recorded: number | undefined, hash: string | undefined): PastCap | undefined {
  if (recorded === undefined || hash === undefined) return undefined;
  const coding = pairValue(side.headers, 'content-encoding')?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity') return undefined;
  return { recorded, size: side.bodySize, hash };
}

/** The request's and the response's PastCap of an entry, set on the normalized sides. */
export function setPastCaps(e: HarEntry, out: Pick<NormalizedEntry, 'request' | 'response'>): void {
  const cut = e._bb?.truncated;
  if (!cut) return;
  const req = pastCap(e.request, cut.request, e._bb?.restHash?.request);
  const res = pastCap(e.response, cut.response, e._bb?.restHash?.response);
  if (req) out.request.truncated = req;
  if (res) out.response.truncated = res;
}

/** True when both sides' bodies were cut at the same byte and hashed alike: compared by prefix, size and hash. */
export function comparablePastCap(a: PastCap | undefined, b: PastCap | undefined): boolean {
  return !!a && !!b && a.recorded === b.recorded && restHashScheme(a.hash) === restHashScheme(b.hash);
}

/** Rows of a differing hash past the cap, readable: dropped where the size (or what was kept) already differs, or the hashes are of other schemes. */
export function pastCapRows<R extends PathRow>(rows: R[]): R[] {
  if (!rows.some(isHashRow)) return rows;
  const other = new Set(rows.filter((r) => !isHashRow(r)).map((r) => r.path));
  return rows.flatMap((r) => {
    if (!isHashRow(r)) return [r];
    const base = r.path.slice(0, -'.hash'.length);
    if (other.has(`${base}.size`) || other.has(`${base}.recorded`)) return [];
    if (typeof r.old === 'string' && typeof r.new === 'string' && restHashScheme(r.old) !== restHashScheme(r.new)) return [];
    return [{
      ...r,
      ...(r.old !== undefined ? { old: 'the bytes past the cap' } : {}),
      ...(r.new !== undefined ? { new: r.old !== undefined ? 'other bytes past the cap (compared by hash)' : 'the bytes past the cap' } : {}),
    }];
  });
}

function isHashRow(r: PathRow): boolean {
  return r.path.endsWith('truncated.hash');
}

const UNLISTED = /\.unlisted(\.(send|receive))?$/;

/**
 * Rows of unlisted messages, readable: a side with none compares as a count of 0 (one `….unlisted.count` row), and
 * a differing digest says so in words, dropped where the count already differs.
 */
export function unlistedRows<R extends PathRow>(rows: R[]): R[] {
  if (!rows.some((r) => r.path.includes('.unlisted'))) return rows;
  const counted = new Set(rows.filter((r) => UNLISTED.test(r.path.replace(/\.count$/, ''))).map((r) => r.path.replace(/\.count$/, '')));
  return rows.flatMap((r) => {
    if (UNLISTED.test(r.path)) return [{ ...r, kind: 'changed', path: `${r.path}.count`, old: countOf(r.old), new: countOf(r.new) }];
    const base = r.path.replace(/\.digest$/, '');
    if (base === r.path || !UNLISTED.test(base)) return [r];
    if (counted.has(base)) return [];
    const how = r.path.startsWith('ws.') ? 'compared by hash' : 'compared by a digest of their normalized forms';
    return [{ ...r, old: 'the messages past those listed', new: `other messages past those listed (${how})` }];
  });
}

function countOf(v: unknown): number {
  return typeof v === 'object' && v !== null && typeof (v as Unlisted).count === 'number' ? (v as Unlisted).count : 0;
}

/**
 * Two sides' WebSocket messages past the list as compared: their hashes only when taken the same way (both plain, or
 * keyed under one key: rest-hash.ts), else their counts alone.
 */
export function comparableUnlisted(a: Unlisted | undefined, b: Unlisted | undefined): [Unlisted | undefined, Unlisted | undefined] {
  if (!a || !b || (a.digest !== '' && b.digest !== '' && restHashScheme(a.digest) === restHashScheme(b.digest))) return [a, b];
  return [{ count: a.count, digest: '' }, { count: b.count, digest: '' }];
}
