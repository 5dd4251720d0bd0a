// A set of strings that may answer "maybe" but never a wrong "no" (a
// one-hash Bloom filter): asked before a look-up in a big Map, it passes over
// most strings that were never added without touching the Map. The binding
// pass asks whether each token of every response is a value the client sends
// later (bound.ts); the Map of those values holds one entry per request id
// (50,000+ in the diff bench), and its look-ups, each a few cache misses, were
// ~5 % of a bounded diff worker (issue 39). The filter's bits fit in L2.

/** Bits in the filter: 2^20 (128 KiB); at 100,000 strings added about 9 % of other strings answer "maybe". */
const BITS_LOG2 = 20;

/**
 * A hash of a string from its length and eight of its characters, spread over
 * it (cheap: no loop). A UUID's dashes sit at fixed places; these positions
 * miss them, so two random UUIDs agree on all eight with odds of 16^-8.
 */
function hashOf(s: string): number {
  const n = s.length;
  const half = n >> 1;
  const quarter = n >> 2;
  // charCodeAt past the end is NaN, which `^` reads as 0: any length hashes.
  let h = Math.imul(n ^ 0x2545f491, 0x9e3779b1);
  h = Math.imul(h ^ s.charCodeAt(0) ^ (s.charCodeAt(1) << 16), 0x85ebca6b);
  h = Math.imul(h ^ s.charCodeAt(n - 1) ^ (s.charCodeAt(n - 2) << 16), 0xc2b2ae35);
  h = Math.imul(h ^ s.charCodeAt(quarter) ^ (s.charCodeAt(half + 1) << 16), 0x27d4eb2f);
  h = Math.imul(h ^ s.charCodeAt(half - 2) ^ (s.charCodeAt(n - 1 - quarter) << 16), 0x165667b1);
  return (h ^ (h >>> 15)) >>> (32 - BITS_LOG2);
}

/** Strings added; `mayHave` is false only for a string never added. */
export class TokenFilter {
  private readonly bits = new Int32Array(1 << (BITS_LOG2 - 5));

  /** Remembers `s`: mayHave(s) is true from now on. */
  add(s: string): void {
    const h = hashOf(s);
    this.bits[h >>> 5]! |= 1 << (h & 31);
  }

  /** False: `s` was never added. True: it may have been. */
  mayHave(s: string): boolean {
    const h = hashOf(s);
    return (this.bits[h >>> 5]! & (1 << (h & 31))) !== 0;
  }
}
