// Bounded sequence alignment: which items of two token sequences line up,
// so that one inserted item is one insertion and not a cascade.
//
// Common prefix and suffix first; small gaps get an exact LCS (dynamic
// programming, capped in cells); big gaps are split at tokens unique on both
// sides (patience diff) and, when there are none, walked greedily with a
// bounded look-ahead. Nothing here is quadratic past the cell cap.

import { appendAll } from '../core/index.js';

/** Gaps with at most this many cells get an exact LCS. */
const LCS_CELLS = 4_000_000;
/** Greedy look-ahead when no unique anchor exists. */
const LOOKAHEAD = 64;

/** Index pairs [i, j] with a[i] === b[j], increasing in both. */
export function alignSequences(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const stack: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]];
  while (stack.length) {
    let [alo, ahi, blo, bhi] = stack.pop()!;
    while (alo < ahi && blo < bhi && a[alo] === b[blo]) out.push([alo++, blo++]);
    const tail: Array<[number, number]> = [];
    while (ahi > alo && bhi > blo && a[ahi - 1] === b[bhi - 1]) tail.push([--ahi, --bhi]);
    appendAll(out, tail);
    const n = ahi - alo;
    const m = bhi - blo;
    if (n === 0 || m === 0) continue;
    if (n * m <= LCS_CELLS) {
      appendAll(out, lcs(a, b, alo, ahi, blo, bhi));
      continue;
    }
    const anchors = uniqueAnchors(a, b, alo, ahi, blo, bhi);
    if (anchors.length === 0) {
      appendAll(out, greedy(a, b, alo, ahi, blo, bhi));
      continue;
    }
    let pa = alo;
    let pb = blo;
    for (const [i, j] of anchors) {
      stack.push([pa, i, pb, j]);
      out.push([i, j]);
      pa = i + 1;
      pb = j + 1;
    }
    stack.push([pa, ahi, pb, bhi]);
  }
  return out.sort((x, y) => x[0] - y[0]);
}

function lcs(a: readonly string[], b: readonly string[], alo: number, ahi: number, blo: number, bhi: number): Array<[number, number]> {
  const n = ahi - alo;
  const m = bhi - blo;
  const w = m + 1;
  // table[i][j] = LCS length of a[alo+i..ahi) and b[blo+j..bhi)
  const table = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * w + j] = a[alo + i] === b[blo + j] ? table[(i + 1) * w + j + 1]! + 1 : Math.max(table[(i + 1) * w + j]!, table[i * w + j + 1]!);
    }
  }
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[alo + i] === b[blo + j]) {
      out.push([alo + i, blo + j]);
      i++;
      j++;
    } else if (table[(i + 1) * w + j]! >= table[i * w + j + 1]!) i++;
    else j++;
  }
  return out;
}

function uniqueAnchors(a: readonly string[], b: readonly string[], alo: number, ahi: number, blo: number, bhi: number): Array<[number, number]> {
  const count = new Map<string, [number, number, number]>(); // token → [countA, countB, indexA]
  for (let i = alo; i < ahi; i++) {
    const c = count.get(a[i]!) ?? [0, 0, i];
    c[0]++;
    count.set(a[i]!, c);
  }
  const pairs: Array<[number, number]> = [];
  const inB = new Map<string, number>();
  for (let j = blo; j < bhi; j++) inB.set(b[j]!, (inB.get(b[j]!) ?? 0) + 1);
  for (let j = blo; j < bhi; j++) {
    const c = count.get(b[j]!);
    if (c && c[0] === 1 && inB.get(b[j]!) === 1) pairs.push([c[2], j]);
  }
  // Longest increasing subsequence on the a-index (pairs are in b order).
  return longestIncreasing(pairs.map((p) => p[0])).map((k) => pairs[k]!);
}

/** The positions, in order, of a longest strictly increasing subsequence of `xs` (patience sorting, O(n log n)). */
export function longestIncreasing(xs: readonly number[]): number[] {
  const tails: number[] = [];
  const prev = new Array<number>(xs.length).fill(-1);
  for (let k = 0; k < xs.length; k++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[tails[mid]!]! < xs[k]!) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[k] = tails[lo - 1]!;
    tails[lo] = k;
  }
  const out: number[] = [];
  for (let k = tails.length ? tails[tails.length - 1]! : -1; k >= 0; k = prev[k]!) out.push(k);
  return out.reverse();
}

function greedy(a: readonly string[], b: readonly string[], alo: number, ahi: number, blo: number, bhi: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let i = alo;
  let j = blo;
  while (i < ahi && j < bhi) {
    if (a[i] === b[j]) {
      out.push([i++, j++]);
      continue;
    }
    let step = 0;
    for (let d = 1; d <= LOOKAHEAD; d++) {
      if (j + d < bhi && a[i] === b[j + d]) { step = 1; j += d; break; }
      if (i + d < ahi && a[i + d] === b[j]) { step = 2; i += d; break; }
    }
    if (step === 0) {
      i++;
      j++;
    }
  }
  return out;
}
