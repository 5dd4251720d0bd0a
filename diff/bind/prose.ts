// Prose is not issued (docs/diff.md "Issued values", issue 36 item 3): a
// server issues ids in JSON values, headers, cookies and structured message
// fields, never in the words people read. An error message ("Item
// abc123 not found"), a sentence in a JSON field or an HTML page is prose:
// binding its words would rewrite later requests (replay) or hide a changed
// text (diff) for nothing. (An HTML page's hidden inputs, metas, links and
// form actions are data, not prose: html.ts reads their made tokens.)

/** A word people write: letters only (a capital first allowed), maybe closed by punctuation. */
const WORD = /^["'(]?[A-Za-z][a-z]*[.,:;!?'")]*$/;

/** Markup: an HTML or XML document or fragment. */
const MARKUP = /^\s*<(?:[!?]|[A-Za-z][\w-]*[\s/>])/;

/**
 * True for text written for people to read: markup, or two or more words
 * separated by spaces of which at least half are plain words. A credential
 * with its scheme (`Bearer eyJ…`), a date, a list of ids or a single word
 * (an enum value) is not prose.
 */
export function isProse(text: string): boolean {
  if (MARKUP.test(text)) return true;
  // No whitespace: one word, without splitting (most values: ids, names, dates).
  if (!/\s/.test(text)) return false;
  const words = text.trim().split(/\s+/);
  if (words.length < 2) return false;
  let plain = 0;
  for (const w of words) if (WORD.test(w)) plain++;
  return plain >= 2 && plain * 2 >= words.length;
}
