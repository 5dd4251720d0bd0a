// Appending one array to another without spreading it: push(...items)
// passes every item as an argument, and past ~100k items (a 200k-entry
// diff's pairs, a big body's tokens) the call overflows the stack.

/** Appends `items` to `target` in order; returns `target`. */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const x of items) target.push(x);
  return target;
}
