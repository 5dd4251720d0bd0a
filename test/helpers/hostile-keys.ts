// Keys a captured answer may hold that a field path must quote: quotes, backslashes, brackets, dots, unicode,
// controls, bidi, nothing at all (diff/selector.ts joinPath and parseFieldPath; the live view reads them too).

/** Object keys and header names that are not plain identifiers, and a few that are. */
export const HOSTILE_KEYS: readonly string[] = [
  '@type', 'first name', '@odata.count', "x-'cand-only'", 'a"b', 'back\\slash', '\\"]', '"]["', 'br[0]ack]', '[3]', '[]', '[', ']',
  'dot.ted', '.', '..', 'ünïcødé', '😀', '\ud800', '\u202Espoof', 'line\nbreak', '\u2028', '\u0000', '', ' ', 'plain', '$ok_1-2',
];
