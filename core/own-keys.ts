// Objects built from keys a peer chose (JSON bodies, query names, header
// names). `out[key] = v` with key "__proto__" sets the object's prototype
// instead of a key, so the whole subtree vanished from comparison (issue 34);
// `key in obj` is true for "toString" on any object. These two helpers are the
// one way bb writes and tests such keys.

/** Sets `key` as an own, enumerable property of `obj`, "__proto__" included. */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/** The value of `obj`'s own `key`; undefined when it has none (never one inherited from Object.prototype). */
export function getOwn<T>(obj: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}
