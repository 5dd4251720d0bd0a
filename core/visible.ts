// Captured text shown among bb's own words (a terminal line, a page's header or tooltip): a control character or
// a bidi override from the traffic (`GET /x/%E2%80%AE?q=‮spoof`, U+202E) reversed the rest of bb's line, or hid
// part of it. visibleText writes each such character as its escape (\u202E), so the text reads as it was sent
// and bb's words around it read as written. The live view's page runs this very function (ui/server.ts serves
// its text), so the terminal and the page write the same escapes.

/**
 * `text` with C0 and C1 controls, DEL and the bidi formatting characters (ALM, LRM, RLM, LRE…RLO, LRI…PDI)
 * written as `\uXXXX`. Self-contained (no imports, no helpers, plain ES2022): its source is served to the page.
 */
export function visibleText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0'));
}
