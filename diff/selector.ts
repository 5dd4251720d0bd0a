// Selectors shared by config rules and known differences (docs/diff.md
// "Config"): `where` is a glob over entry ids (core/glob.ts: `*` any run
// of characters, `?` one); `path` is a field-path suffix matching at a segment boundary,
// where `*` is one segment and `[]` any index.

/**
 * Parses a field path as joinPath writes it: `a.b[0]["x.y"][]` → ["a", "b", 0, "x.y", -1]: a key as its text (a
 * quoted one unescaped as the JSON string it is), an index as its number, `[]` (any index) as -1. Self-contained
 * (no imports, no helpers, plain ES2022): the live view's page runs this very function (ui/server.ts serves its
 * text as /shared.js), so a field the diff names is the field the page marks.
 */
export function parseFieldPath(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\d*)\]|\.?([^.[\]]+)/g;
  for (const m of path.matchAll(re)) {
    if (m[1] !== undefined) out.push(JSON.parse(`"${m[1]}"`) as string);
    else if (m[2] !== undefined) out.push(m[2] === '' ? -1 : Number(m[2]));
    else if (m[3] !== undefined) out.push(m[3]);
  }
  return out;
}

/** Splits a field path into segments: `a.b[0]["x.y"]` → ["a", "b", "[0]", "x.y"] (an index as its bracketed text). */
export function splitPath(path: string): string[] {
  return parseFieldPath(path).map((s) => (typeof s === 'string' ? s : s < 0 ? '[]' : `[${s}]`));
}

/** Compiles a path suffix selector. */
export function pathMatcher(selector: string): (path: string) => boolean {
  const want = splitPath(selector);
  return (path) => {
    if (want.length === 0) return true;
    const have = splitPath(path);
    if (have.length < want.length) return false;
    const offset = have.length - want.length;
    for (let i = 0; i < want.length; i++) {
      const w = want[i]!;
      const h = have[offset + i]!;
      if (w === '*') continue;
      if (w === '[]') {
        if (!/^\[\d*\]$/.test(h)) return false;
        continue;
      }
      if (w !== h) return false;
    }
    return true;
  };
}

/** A field path with indices replaced by []: items[3].name → items[].name (a quoted key's text, `["[3]"]`, stays). */
export function pathPattern(path: string): string {
  return path.replace(/\["(?:[^"\\]|\\.)*"\]|\[\d+\]/g, (m) => (m.startsWith('["') ? m : '[]'));
}

/** Appends a key to a field path, quoting keys that are not plain identifiers. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}
