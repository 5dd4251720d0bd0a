// The config's `normalize.patterns`, compiled. They run before the built-ins
// that recognise whole tokens (uuids, ULIDs, session ids, redaction
// placeholders, generated shapes), so a pattern can claim an id whole as its
// own class (`conn_<uuid>`); but a match that would cut such a token in two
// (`[0-9a-f]{4}$` on a uuid's tail) is left as it is, so the built-in still
// sees its token. The order and this guard are in docs/diff.md "Order of the rules".
import type { NormalizeConfig } from '../config-types.js';
import type { OrdinalTable } from './ordinals.js';
import type { BuiltinValueRule } from './builtin-rules.js';

/** A token a later built-in will take, as [start, end) offsets. */
export type Span = readonly [number, number];

/** The spans of a string that config patterns must not cut. */
export type TokenGuard = (s: string) => Span[];

/** The guard made of the built-in value rules that recognise whole tokens (ordinal patterns and shapes) among `rules`. */
export function tokenGuard(rules: readonly BuiltinValueRule[]): TokenGuard {
  const finders: TokenGuard[] = [];
  for (const v of rules) {
    if ('spans' in v) finders.push((s) => (v.hint(s) ? v.spans(s).map((x) => [x.start, x.end] as const) : []));
    else if ('ordinal' in v) finders.push((s) => (v.hint(s) ? [...s.matchAll(v.pattern)].map((m) => [m.index, m.index + m[0].length] as const) : []));
  }
  return (s) => finders.flatMap((f) => f(s));
}

/** One config pattern, compiled: a rewrite of one string. */
export interface ConfigPatternRule {
  /** The pattern's name (or `pattern[i]`). */
  name: string;
  /** The ordinal class, for an ordinal pattern. */
  cls?: string;
  /** Rewrites one string; ordinal matches are marked in `table`. */
  apply: (s: string, table: OrdinalTable) => string;
}

/** Compiles the config's patterns, each guarded so it never cuts a token `guard` finds. */
export function compileConfigPatterns(patterns: NonNullable<NormalizeConfig['patterns']>, guard: TokenGuard): ConfigPatternRule[] {
  return patterns.map((p, i) => {
    const re = new RegExp(p.regex, `g${p.flags ?? ''}`);
    const name = p.name ?? `pattern[${i}]`;
    const ordinal = p.ordinal;
    const replace = p.replace ?? '<MASKED>';
    const apply = (s: string, table: OrdinalTable): string => {
      const spans = guard(s);
      // The common case, no token to protect: one plain replace.
      if (spans.length === 0) return ordinal ? s.replace(re, (m) => table.mark(ordinal, m)) : s.replace(re, replace);
      return s.replace(re, (...args: unknown[]) => {
        const m = args[0] as string;
        const named = typeof args[args.length - 1] === 'object' ? 1 : 0;
        const at = args[args.length - 2 - named] as number;
        if (cuts(at, at + m.length, spans)) return m;
        return ordinal ? table.mark(ordinal, m) : expand(replace, args.slice(0, args.length - 2 - named) as Array<string | undefined>, at, s, named ? (args[args.length - 1] as Record<string, string | undefined>) : undefined);
      });
    };
    return { name, ...(ordinal ? { cls: ordinal } : {}), apply };
  });
}

/** Whether a match [from, to) overlaps a span without holding all of it. */
function cuts(from: number, to: number, spans: readonly Span[]): boolean {
  // An empty match strictly inside a span counts too (a < from = to < b).
  for (const [a, b] of spans) if (from < b && a < to && !(from <= a && b <= to)) return true;
  return false;
}

/** A replacement string with `$$`, `$&`, `` $` ``, `$'`, `$n` and `$<name>` expanded, as String#replace does. */
function expand(template: string, groups: Array<string | undefined>, at: number, input: string, named: Record<string, string | undefined> | undefined): string {
  const match = groups[0] ?? '';
  return template.replace(/\$(\$|&|`|'|\d{1,2}|<([^>]*)>)/g, (whole, what: string, name: string | undefined) => {
    if (what === '$') return '$';
    if (what === '&') return match;
    if (what === '`') return input.slice(0, at);
    if (what === "'") return input.slice(at + match.length);
    if (name !== undefined) return named ? (named[name] ?? '') : whole;
    // `$12` is group 12 when there is one, else group 1 followed by "2".
    const n = Number(what);
    if (n > 0 && n < groups.length) return groups[n] ?? '';
    const one = Number(what[0]);
    if (what.length === 2 && one > 0 && one < groups.length) return (groups[one] ?? '') + what[1];
    return whole;
  });
}
