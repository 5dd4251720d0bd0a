// Random ids for tests, in the shapes bb recognises as generated. A hex id
// that draws no letter is digits alone, which bb reads as a number, not a
// hex id (docs/diff.md "Generated values": one 12-hex id in 300): a test about
// random ids that must pair draws again rather than fail once in a while.
import { randomBytes } from 'node:crypto';

/** `bytes` random bytes as lower-case hex with at least one letter (12 hex digits by default). */
export function hexId(bytes = 6): string {
  for (;;) {
    const id = randomBytes(bytes).toString('hex');
    if (/[a-f]/.test(id)) return id;
  }
}
