// bb's own version for HAR's creator field, read once from package.json
// (found by walking up: the code runs from dist/capture/ and, in tests, from capture/).
import { existsSync, readFileSync } from 'node:fs';

let cached: string | undefined;

/** bb's package version, or "0.0.0" when package.json cannot be found. */
export function bbVersion(): string {
  if (cached !== undefined) return cached;
  cached = '0.0.0';
  let dir = new URL('.', import.meta.url);
  for (let i = 0; i < 5; i++) {
    const candidate = new URL('package.json', dir);
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'bb' && pkg.version) {
          cached = pkg.version;
          break;
        }
      } catch {
        // Not ours: keep walking up.
      }
    }
    dir = new URL('..', dir);
  }
  return cached;
}
