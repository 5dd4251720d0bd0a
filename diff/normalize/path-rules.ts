// The config's per-path rules (`normalize.paths`): mask or drop the fields
// they select in the entries they select, after entries are named (a rule's
// `where` is a glob over entry ids). Compiled once per run (createContext):
// the stores and each side's NormalizeContext share the compiled list. A rule
// with a `pattern` masks what it matches inside the value (a value of another
// shape stays itself: value for value); one without erases the field, and
// what it erased is noted so the report can count the rows it hid
// (erased.ts, rule-hidden.ts): nothing disappears silently.
import type { NormalizedEntry } from '../types.js';
import type { PathRuleConfig } from '../config-types.js';
import { globMatcher } from '../../core/index.js';
import { joinPath, pathMatcher } from '../selector.js';
import { erasedNote, type ErasedNote } from './erased.js';

/** A per-path rule with its selectors compiled. */
export interface CompiledPathRule extends PathRuleConfig {
  /** Whether the rule applies to the entry with this id (`where`). */
  selects: (id: string) => boolean;
  /** Whether the rule applies to the field at this path (`path`). */
  at: (path: string) => boolean;
  /** Its place in the config's list (`normalize.paths[i]`). */
  index: number;
  /** The compiled `pattern`, when the rule masks inside values instead of erasing the field. */
  regex?: RegExp;
}

/** A run's per-path rules, compiled (compilePathRules). */
export type PathRules = readonly CompiledPathRule[];

/** The config's per-path rules with their selectors compiled (once per run, in createContext). */
export function compilePathRules(rules: readonly PathRuleConfig[]): PathRules {
  return rules.map((r, index) => ({ ...r, selects: globMatcher(r.where ?? '*'), at: pathMatcher(r.path), index, ...(r.pattern !== undefined ? { regex: new RegExp(r.pattern, 'g') } : {}) }));
}

// A scalar value with a rule's pattern masked inside its text (a string as it is, a number's or boolean's JSON); other values and no match: unchanged.
function maskInside(v: unknown, rule: CompiledPathRule): unknown {
  // A rule made from values of one type (bb noise) leaves the others to be compared: 1 → "5" is a change of type.
  if (rule.type !== undefined && typeof v !== rule.type) return v;
  const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : undefined;
  if (text === undefined) return v;
  const out = text.replace(rule.regex!, rule.replace ?? '<MASKED>');
  return out === text ? v : out;
}

/**
 * Applies the rules (applyPathRules) and answers what the erasing ones masked
 * or dropped, one note per place (undefined when nothing): the stores keep it
 * on the entry's summary. `unnumberText` drops ordinal numbers, so one id
 * numbered apart on each side reads alike.
 */
export function applyPathRulesNoting(entry: NormalizedEntry, rules: PathRules, unnumberText: (s: string) => string): ErasedNote[] | undefined {
  const notes: ErasedNote[] = [];
  applyPathRules(entry, rules, (rule, path, value) => notes.push(erasedNote(`paths[${rule}]`, path, value, unnumberText)));
  return notes.length ? notes : undefined;
}

/**
 * Applies a run's compiled per-path rules to a finished entry (in place).
 * `onErase`: called with each value a rule without a pattern masks or drops.
 */
export function applyPathRules(entry: NormalizedEntry, rules: PathRules, onErase?: (rule: number, path: string, value: unknown) => void): void {
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
      // Pattern rules at one place all apply, in order (bb noise may write several shapes for one field).
      if (hit?.regex) {
        for (const c of active) if (c.regex && c.at(p)) src[k] = maskInside(src[k], c);
      } else if (hit) {
        onErase?.(hit.index, p, src[k]);
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
