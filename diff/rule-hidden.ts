// Rows hidden by a config rule that erases a whole value (docs/diff.md
// "Config"): a `normalize.paths` rule without a `pattern`, a `normalize.keys`
// rule and a `normalize.headers` mask replace (or drop) the value, whatever
// it was, so a real change there would vanish. The stores note what each
// such rule erased in each entry (normalize/erased.ts, on the entry's
// summary); here the notes of each pair's two sides are compared, and every
// place where the erased values differ is a row that rule hid, and so is a
// place only one side had when the rule drops the field (`ignore`: a
// replaced one still shows as added or removed). The report says how many
// (`hidden by rule normalize.keys[0] (key token): 3 rows`). Pure.
import type { NormalizeConfig } from './config-types.js';
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

// The config lists in the order their rules apply (keys and headers as entries are normalized, paths on the finished entry).
const LISTS = ['keys', 'headers', 'paths'] as const;

/** The report's line for rule `id` (`keys[1]`) of the config, with its count. */
function ruleHidden(id: string, rows: number, cfg: NormalizeConfig): RuleHidden {
  const [, list, at] = /^(\w+)\[(\d+)\]$/.exec(id)!;
  const i = Number(at);
  const rule = `normalize.${id}`;
  if (list === 'keys') {
    const k = cfg.keys![i]!;
    return { rule, ...(k.key !== undefined ? { key: k.key } : { pattern: k.pattern! }), rows };
  }
  if (list === 'headers') return { rule, header: cfg.headers![i]!.toLowerCase(), rows };
  const p = cfg.paths![i]!;
  return { rule, ...(p.where !== undefined ? { where: p.where } : {}), path: p.path, rows };
}

// Whether the rule drops its field (a paths rule with `ignore`): only then does a field on one side only vanish.
function drops(id: string, cfg: NormalizeConfig): boolean {
  const m = /^paths\[(\d+)\]$/.exec(id);
  return m !== null && cfg.paths![Number(m[1])]!.ignore === true;
}

/**
 * The rows each erasing rule hid over the paired entries of a line-up
 * (`summaries`: each side's, by place), for the rules that hid any, in the
 * order they apply (keys, headers, paths), each list in the config's order.
 * Entries on one side only are rows of their own already.
 */
export function rowsHiddenByRules(lineup: readonly Lineup[], summaries: readonly [readonly EntrySummary[], readonly EntrySummary[]], cfg: NormalizeConfig): RuleHidden[] {
  const counts = new Map<string, number>();
  for (const l of lineup) {
    if (l.old === undefined || l.new === undefined) continue;
    const a = summaries[0][l.old]?.erased;
    const b = summaries[1][l.new]?.erased;
    if (!a && !b) continue;
    const old = byPlace(a);
    const neu = byPlace(b);
    for (const place of new Set([...old.keys(), ...neu.keys()])) {
      const x = old.get(place);
      const y = neu.get(place);
      if (x === y) continue;
      const rule = place.slice(0, place.indexOf('\t'));
      if ((x === undefined || y === undefined) && !drops(rule, cfg)) continue;
      counts.set(rule, (counts.get(rule) ?? 0) + 1);
    }
  }
  const order = (id: string) => LISTS.indexOf(id.slice(0, id.indexOf('[')) as (typeof LISTS)[number]) * 1e9 + Number(id.slice(id.indexOf('[') + 1, -1));
  return [...counts.keys()].sort((x, y) => order(x) - order(y)).map((id) => ruleHidden(id, counts.get(id)!, cfg));
}

/** What a rule's line names it by: a paths rule's `where` and `path`, a keys rule's key (or /pattern/), a header's name. */
function ruleSubject(r: RuleHidden): string {
  if (r.path !== undefined) return `${r.where !== undefined ? `${r.where} ` : ''}${r.path}`;
  if (r.header !== undefined) return `header ${r.header}`;
  return `key ${r.key ?? `/${r.pattern}/`}`;
}

/** One rule's line in the reports: `hidden by rule normalize.paths[0] (response.body.token): 3 rows`. */
export function ruleHiddenText(r: RuleHidden): string {
  return `hidden by rule ${r.rule} (${ruleSubject(r)}): ${r.rows} row${r.rows === 1 ? '' : 's'}`;
}

/** What to do instead, after a rule's line: only a paths rule can take a `pattern`. */
export function ruleHiddenAdvice(r: RuleHidden): string {
  return r.path !== undefined ? 'the rule erases the whole field: give it a "pattern" to mask only what varies' : 'the rule replaces the whole value: a normalize.paths rule with a "pattern" masks only what varies';
}
