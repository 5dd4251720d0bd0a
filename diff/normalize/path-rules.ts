// The config's per-path rules (`normalize.paths`): mask or drop the fields
// they select in the entries they select, after entries are named (a rule's
// `where` is a glob over entry ids). Compiled once per run (createContext):
// the stores and each side's NormalizeContext share the compiled list.
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

/** The config's per-path rules with their selectors compiled (once per run, in createContext). */
export function compilePathRules(rules: readonly PathRuleConfig[]): PathRules {
  return rules.map((r) => ({ ...r, selects: globMatcher(r.where ?? '*'), at: pathMatcher(r.path) }));
}

/** Applies a run's compiled per-path rules to a finished entry (in place). */
export function applyPathRules(entry: NormalizedEntry, rules: PathRules): void {
  if (!rules.length) return;
  const active = rules.filter((c) => c.selects(entry.id));
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
