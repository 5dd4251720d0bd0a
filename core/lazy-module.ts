// A dependency loaded on first use: a command that never needs it (bb diff
// needs no TLS, bb capture refusing a flag needs no WebSocket client) does not
// pay for loading it, and neither does each worker. For CommonJS packages,
// which `require` returns whole (node-forge, ws, yauzl, protobufjs).
import { createRequire } from 'node:module';

/** A getter that loads the package `id` (resolved from the module at `base`, its import.meta.url) once, on its first call. */
export function lazyModule<T>(id: string, base: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= createRequire(base)(id) as T);
}
