// The one glob → RegExp of bb: `*` is any run of characters (slashes
// included), `?` exactly one, everything else literal; the whole string must
// match. Used for entry ids and routes (diff's `where`, pairing route keys),
// URLs (bb frames --url) and host names (forward mode's --hosts).

/** Options of globToRegExp. */
export interface GlobOptions {
  /** Match regardless of case (host names); ids and URLs are case-sensitive. */
  ignoreCase?: boolean;
}

/** Compiles a glob: `*` any run of characters, `?` one; the whole string must match. */
export function globToRegExp(glob: string, options: GlobOptions = {}): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, options.ignoreCase ? 'si' : 's');
}

/** A predicate for one glob. */
export function globMatcher(glob: string, options: GlobOptions = {}): (s: string) => boolean {
  const re = globToRegExp(glob, options);
  return (s) => re.test(s);
}
