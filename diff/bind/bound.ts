// Which issued values bind, for `bb diff` (docs/diff.md "Issued values"):
// along one capture's timeline, a value the server issued first (issued.ts:
// a JSON field, a header such as Location, a Set-Cookie value, an SSE event or
// a server WebSocket message field, never prose) that the client later sent
// back (path, query, header, cookie, JSON or form body, client WebSocket
// message) is bound, whatever its shape. A value the client sent before any
// server issued it is the client's own (a route word, its host, a name it
// typed) and never binds: that is replay's rule (scenario/replay/correlate.ts).
//
// The diff marks every occurrence of a bound value (markIssued) as an ordinal
// of class ISSUED, so what follows is the ordinal machinery's: pairing sees
// `<ISSUED>` (entries whose paths differ only by bound values pair), and the
// compare loop numbers old and new values met at the same aligned place alike
// (correspond.ts): X ↔ Y compares equal, and a value that breaks its binding
// (X ↔ Y here, X ↔ Z there) renders as another number, a real `changed`.
//
// The timeline is file order: bb writes an entry when it completes, so an
// entry whose request carries a value comes after the one whose response
// issued it; browsers' HARs list entries as they started. Both stores read
// the same order, so the in-memory and the bounded path bind alike.
import type { HarEntry } from '../../capture/index.js';
import { messageValues, recordedResponse, requestTokens, responseValues, rewriteTokens, sentRequest, tokensOf, type IssuedValue } from './issued.js';

/** The ordinal class bound values are marked as (`<ISSUED:n>`). */
export const ISSUED_CLASS = 'ISSUED';

/** Distinct values one timeline remembers: captured content is hostile input (past it, new values are not followed). */
const MAX_VALUES = 1_000_000;

/**
 * A value a server made rather than a word of its protocol: it holds a digit, or capitals past its
 * first letter. `websocket` in an Engine.IO handshake's upgrades, sent back as `?transport=websocket`,
 * is the protocol's word, compared as written; `Xk9fQ2`, `4821` and `aB3_x-…` are made.
 */
export function madeNotWord(v: string): boolean {
  return /\d/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v.slice(1)));
}

/** One capture's timeline, entry by entry: what the server issued, what the client sent first, what was sent back. */
export class IssuedTimeline {
  private readonly issued = new Set<string>();
  private readonly clientSent = new Set<string>();
  /** Values the server issued and the client later sent back. */
  readonly bound = new Set<string>();

  // Words never bind, so neither set keeps them: most of what a server sends is words, and the sets'
  // hashing was the largest cost of binding (the diff bench's 10k-entry pair).
  private sent(tokens: readonly string[]): void {
    for (const t of tokens) {
      if (!madeNotWord(t)) continue;
      if (this.issued.has(t)) this.bound.add(t);
      else if (this.clientSent.size < MAX_VALUES) this.clientSent.add(t);
    }
  }

  private issue(values: readonly IssuedValue[]): void {
    for (const v of values) if (madeNotWord(v.value) && !this.clientSent.has(v.value) && this.issued.size < MAX_VALUES) this.issued.add(v.value);
  }

  /** Reads the next entry: its request, its response, then its WebSocket messages in order. */
  add(e: HarEntry): void {
    this.sent(requestTokens(sentRequest(e.request)));
    this.issue(responseValues(recordedResponse(e)));
    let r = 0;
    for (const m of e._webSocketMessages ?? []) {
      if (m.opcode !== 1) {
        // A server's binary and control frames count in its message numbering (as replay counts them).
        if (m.type === 'receive' && (m.opcode === 2 || m.opcode === 9 || m.opcode === 10)) r++;
        continue;
      }
      if (m.type === 'receive') this.issue(messageValues(m.data, r++));
      else this.sent(tokensOf(m.data));
    }
  }
}

/** The bound values of a capture's entries, in file order. */
export function boundValues(entries: Iterable<HarEntry>): Set<string> {
  const t = new IssuedTimeline();
  for (const e of entries) t.add(e);
  return t.bound;
}

/** A string with every bound value in it (the whole string, or a whole token) replaced by `mark(value)`. */
export function markIssued(s: string, bound: ReadonlySet<string>, mark: (value: string) => string): string {
  // A whole value first: a cookie value ("a/b+c==") is bound whole, not token by token.
  if (bound.has(s)) return mark(s);
  return rewriteTokens(s, { get: (t) => (bound.has(t) ? mark(t) : undefined) }).text;
}
