// Redacted values in what the client sent (docs/replay.md "Correlation:
// following the server's ids"): bb's redaction placeholders, which a replay
// must explain (a server issued them) or be given. What counts as a
// server-issued value, and where it is, is diff/bind's (diff/index.ts).
import { PLACEHOLDER_SOURCE } from '../../capture/index.js';

/** A redacted secret stays one token: `<redacted:0123abcd>`, in binary payloads padded to the secret's length (`<redacted:0123abcd~~~>`). */
const PLACEHOLDER = new RegExp(PLACEHOLDER_SOURCE, 'y');

/** The redacted placeholders in a text. */
export function placeholdersIn(text: string): string[] {
  const out: string[] = [];
  for (let i = text.indexOf('<redacted:'); i >= 0; i = text.indexOf('<redacted:', i + 1)) {
    PLACEHOLDER.lastIndex = i;
    const m = PLACEHOLDER.exec(text);
    if (m) out.push(m[0]);
  }
  return out;
}
