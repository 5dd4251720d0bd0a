// Selectors shared by config rules and known differences (docs/diff.md
// "Config"): `where` is a glob over entry ids (core/glob.ts: `*` any run
// of characters, `?` one); `path` is a field-path suffix matching at a segment boundary,
// where `*` is one segment and `[]` any index.

/** Splits a field path into segments: `a.b[0]["x.y"]` → ["a", "b", "[0]", "x.y"]. */
export function splitPath(path: string): string[] {
  const out: string[] = [];
  const re = /\["((?:[^"\\]|\\.)*)"\]|\[(\d*)\]|\.?([^.[\]]+)/g;
  for (const m of path.matchAll(re)) {
    if (m[1] !== undefined) out.push(JSON.parse(`"${m[1]}"`) as string);
    else if (m[2] !== undefined) out.push(`[${m[2]}]`);
    else if (m[3] !== undefined) out.push(m[3]);
  }
  return out;
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

/** A field path with indices replaced by []: items[3].name → items[].name. */
export function pathPattern(path: string): string {
  return path.replace(/\[\d+\]/g, '[]');
}

/** Appends a key to a field path, quoting keys that are not plain identifiers. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}
