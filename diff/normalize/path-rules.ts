// The config's per-path rules (`normalize.paths`): mask or drop the fields
// they select in the entries they select, after entries are named (a rule's
// `where` is a glob over entry ids). Compiled once per run: a NormalizeContext
// holds the compiled list, and a caller that hands over the config's list
// itself gets the same compiled list back (memoized by the list).
import type { NormalizedEntry } from '../types.js';
import type { PathRuleConfig } from '../config-types.js';
import { globMatcher } from '../../core/index.js';
import { joinPath, pathMatcher } from '../selector.js';

/** A per-path rule with its selectors compiled. */
export interface CompiledPathRule extends PathRuleConfig {
  /** Whether the rule applies to the entry with this id (`where`). */
  selects: (id: string) => boolean;
  /** Whether the rule applies to the field at this path (`path`). */
  at: (path: string) => boolean;
}

/** A run's per-path rules, compiled (compilePathRules). */
export type PathRules = readonly CompiledPathRule[];

// A compiled list answers for itself, so compiling it again costs a lookup.
const compiledOf = new WeakMap<readonly PathRuleConfig[], PathRules>();

/** The rules compiled: once per list (a run's config is resolved once, so once per run). */
export function compilePathRules(rules: readonly PathRuleConfig[]): PathRules {
  let out = compiledOf.get(rules);
  if (!out) {
    out = rules.map((r) => ({ ...r, selects: globMatcher(r.where ?? '*'), at: pathMatcher(r.path) }));
    compiledOf.set(rules, out);
    compiledOf.set(out, out);
  }
  return out;
}

/** Applies the per-path rules (compiled, or the config's list, compiled once) to a finished entry (in place). */
export function applyPathRules(entry: NormalizedEntry, rules: readonly PathRuleConfig[]): void {
  if (!rules.length) return;
  const active = compilePathRules(rules).filter((c) => c.selects(entry.id));
  if (!active.length) return;
  const walk = (v: unknown, path: string): unknown => {
    if (v === null || typeof v !== 'object') return v;
    const isArr = Array.isArray(v);
    const src = v as Record<string, unknown>;
    for (const k of Object.keys(src)) {
      const p = isArr ? joinPath(path, Number(k)) : joinPath(path, k);
      const hit = active.find((c) => c.at(p));
      if (hit) {
        if (hit.ignore && !isArr) delete src[k];
        else src[k] = hit.replace ?? '<MASKED>';
      } else src[k] = walk(src[k], p);
    }
    return v;
  };
  walk(entry.request, 'request');
  walk(entry.response, 'response');
  if (entry.ws) walk(entry.ws, 'ws');
  if (entry.grpc) walk(entry.grpc, 'grpc');
}
