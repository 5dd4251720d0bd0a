// Random ids for tests, in the shapes bb recognises as generated. A hex id
// that draws no letter is digits alone, which bb reads as a number, not a
// hex id (docs/diff.md "Generated values": one 12-hex id in 300): a test about
// random ids that must pair draws again rather than fail once in a while.
// Likewise a nanoid whose letters happen to read as words (about one in
// 1,000, docs/diff.md "Generated values") keeps its text.
import { randomBytes } from 'node:crypto';
import { shapeOf } from '../../diff/normalize/shapes.js';

/** `bytes` random bytes as lower-case hex with at least one letter (12 hex digits by default). */
export function hexId(bytes = 6): string {
  for (;;) {
    const id = randomBytes(bytes).toString('hex');
    if (/[a-f]/.test(id)) return id;
  }
}

/** A random nanoid (21 characters of A-Za-z0-9_-) that bb reads as one (`<NANOID:n>`). */
export function nanoId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url').slice(0, 21);
    if (shapeOf(id) === 'NANOID') return id;
  }
}
