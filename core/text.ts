// Two small text helpers several folders need: a percent-encoded text decoded
// without throwing, and a literal text as a regular expression's source.

/** A percent-encoded text decoded (`%2B` → `+`; a `+` stays a `+`); itself when an escape is malformed. */
export function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `text` as a regular expression that matches it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
