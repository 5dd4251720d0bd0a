// Arrays: appending one to another without spreading it (push(...items)
// passes every item as an argument, and past ~100k items, a 200k-entry
// diff's pairs or a big body's tokens, the call overflows the stack), and
// finding a number in an ascending list (a live capture's rows by seq).

/** Appends `items` to `target` in order; returns `target`. */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const x of items) target.push(x);
  return target;
}

/** The index of `value` in the ascending `list` between `from` and its end, or -1. */
export function indexInAscending(list: ArrayLike<number>, value: number, from = 0, length = list.length): number {
  let lo = from;
  let hi = length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = list[mid]!;
    if (v === value) return mid;
    if (v < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
