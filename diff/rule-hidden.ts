// Rows hidden by a config rule that erases a field (docs/diff.md "Triage:
// known differences, noise, `bb known add`, `bb noise`"): a `normalize.paths`
// rule without a `pattern` masks or drops the whole value, whatever it was,
// so a real change there would vanish. The stores note what each such rule
// erased in each entry (path-rules.ts applyPathRulesNoting, on the entry's
// summary); here the notes of each pair's two sides are compared, and every
// place where the erased values differ, or only one side had the field, is a
// row that rule hid. The report says how many (`hidden by rule
// normalize.paths[0] (response.body.token): 3 rows`). Pure.
import type { PathRuleConfig } from './config-types.js';
import type { EntrySummary } from './context.js';
import type { Lineup } from './pair.js';
import type { RuleHidden } from './types.js';

// A note is `rule \t path \t digest`: the place is everything before the last tab.
function byPlace(notes: readonly string[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of notes ?? []) {
    const cut = n.lastIndexOf('\t');
    out.set(n.slice(0, cut), n.slice(cut + 1));
  }
  return out;
}

/**
 * The rows each erasing path rule hid over the paired entries of a line-up
 * (`summaries`: each side's, by place), for the rules that hid any, in the
 * config's order. Entries on one side only are rows of their own already.
 */
export function rowsHiddenByRules(lineup: readonly Lineup[], summaries: readonly [readonly EntrySummary[], readonly EntrySummary[]], rules: readonly PathRuleConfig[]): RuleHidden[] {
  const counts = new Map<number, number>();
  for (const l of lineup) {
    if (l.old === undefined || l.new === undefined) continue;
    const a = summaries[0][l.old]?.erased;
    const b = summaries[1][l.new]?.erased;
    if (!a && !b) continue;
    const old = byPlace(a);
    const neu = byPlace(b);
    for (const place of new Set([...old.keys(), ...neu.keys()])) {
      if (old.get(place) === neu.get(place)) continue;
      const rule = Number(place.slice(0, place.indexOf('\t')));
      counts.set(rule, (counts.get(rule) ?? 0) + 1);
    }
  }
  return [...counts.keys()]
    .sort((x, y) => x - y)
    .map((i) => ({ rule: `normalize.paths[${i}]`, ...(rules[i]!.where !== undefined ? { where: rules[i]!.where } : {}), path: rules[i]!.path, rows: counts.get(i)! }));
}

/** One rule's line in the reports: `hidden by rule normalize.paths[0] (response.body.token): 3 rows`. */
export function ruleHiddenText(r: RuleHidden): string {
  return `hidden by rule ${r.rule} (${r.where !== undefined ? `${r.where} ` : ''}${r.path}): ${r.rows} row${r.rows === 1 ? '' : 's'}`;
}
