// The terminal report (docs/diff.md "Findings"): verdict line first, then one
// line per real finding, largest first, with its sample request lines, the
// bb show command that opens the first (show-command.ts) and the findings
// that follow from it indented under it (`↳`); known and noise findings
// folded to a line each. --rows prints every difference row
// (stable id, request line, entry id and each side's #<seq>, path, old → new
// elided around the change) under its finding.
import type { DiffResult, Difference, Finding } from '../types.js';
import { ratifiedValuesText } from '../ratified.js';
import { noResponse } from '../findings-fold.js';
import { ruleHiddenAdvice, ruleHiddenText } from '../rule-hidden.js';
import { notReplayedText } from '../not-replayed.js';
import { ms, times, timingLines } from './timing-text.js';
import { shownValue } from './shown-value.js';
import { exchangesOf, showCommand } from './show-command.js';

/** Options for the text report. */
export interface TextOptions {
  /** ANSI colours (the CLI decides: TTY and no NO_COLOR). */
  color: boolean;
  /** Print every difference row under its finding (--rows). */
  rows?: boolean;
  /** The --json report this run writes, for the hint's `bb known add --from` (absent: the hint says how to write one). */
  report?: string;
}

/** How wide a value is shown in a finding's line (bb shadow's lines too). */
export const VALUE_WIDTH = 60;

/** A value as short JSON-ish text; `path`: the field it is the value of (shown-value.ts). */
export function shortValue(v: unknown, max = VALUE_WIDTH, path = ''): string {
  const s = shownValue(v, path);
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** old → new, both elided around the first and last changed characters; `path`: the field they are values of (shown-value.ts). */
export function elidePair(a: unknown, b: unknown, max = VALUE_WIDTH, path = ''): [string, string] {
  const sa = shownValue(a, path);
  const sb = shownValue(b, path);
  if (sa.length <= max && sb.length <= max) return [sa, sb];
  let pre = 0;
  while (pre < sa.length && pre < sb.length && sa[pre] === sb[pre]) pre++;
  let suf = 0;
  while (suf < sa.length - pre && suf < sb.length - pre && sa[sa.length - 1 - suf] === sb[sb.length - 1 - suf]) suf++;
  const ctx = 16;
  const cut = (s: string) => {
    const from = Math.max(0, pre - ctx);
    const to = Math.min(s.length, s.length - suf + ctx);
    let mid = s.slice(from, to);
    if (mid.length > max) mid = `${mid.slice(0, max - 1)}…`;
    return `${from > 0 ? '…' : ''}${mid}${to < s.length ? '…' : ''}`;
  };
  return [cut(sa), cut(sb)];
}

/** A reordered message or item that reads the same on both sides, as "moved 2 → 3: <message>". */
function movedLine(d: Difference): string | undefined {
  const m = d.move;
  if (m?.item === undefined) return undefined;
  const what = m.item.length > VALUE_WIDTH ? `${m.item.slice(0, VALUE_WIDTH - 1)}…` : m.item;
  return `moved ${m.from} → ${m.to}: ${what}`;
}

type Paint = (code: string, s: string) => string;
const plain: Paint = (_c, s) => s;

/** What a finding says, on one line: pattern, kind, values, where. */
export function findingLine(f: Finding, c: Paint = plain): string {
  const { what, values } = findingWhat(f, c);
  const where = f.routes.length === 1 ? f.routes[0]! : `${f.routes.length} routes`;
  // A timing finding is about a route as a whole (its samples are in the Timing section).
  if (f.kind === 'slower') return `${what}${values} in ${where}`;
  const rows = f.rows.length > f.entries ? ` (${f.rows.length} rows)` : '';
  return `${what}${values} in ${f.entries} of ${f.of} ${f.routes.length === 1 ? where : `entries, ${where}`}${rows}`;
}

/**
 * The lines under a finding for its consequences (findings-fold.ts), one
 * each: `↳ [id] response.body changed`, with how many of the cause's entries
 * it holds on when not all of them.
 */
export function consequenceLines(f: Finding, c: Paint = plain): string[] {
  return (f.consequences ?? []).map((k) => {
    const { what, values } = findingWhat(k, c);
    const part = k.entries < f.entries ? ` in ${k.entries} of these ${f.entries}` : '';
    const rows = k.rows.length > k.entries ? ` (${k.rows.length} rows)` : '';
    const broken = brokenRatificationText(k);
    return `↳ [${k.id}] ${what}${values}${part}${rows}${broken ? `; ${broken}` : ''}`;
  });
}

// A finding's field and kind, and its values when it has one pair: "response.status changed 200 → 404", "no response in old (new answered 500)".
function findingWhat(f: Finding, c: Paint): { what: string; values: string } {
  const none = noResponse(f);
  if (none) {
    const other = none === 'old' ? f.new : f.old;
    return { what: `no response in ${none}`, values: other === undefined ? '' : ` (${none === 'old' ? 'new' : 'old'} answered ${c(none === 'old' ? '32' : '31', shortValue(other, VALUE_WIDTH, f.pattern))})` };
  }
  const what = f.pattern === '' ? `entry ${f.kind}` : `${f.pattern} ${f.kind}`;
  let values = '';
  if (f.kind === 'slower' && typeof f.old === 'number' && typeof f.new === 'number') values = ` median ${c('31', `${ms(f.old)} ms`)} → ${c('31', `${ms(f.new)} ms`)} (${times(f.old > 0 ? f.new / f.old : null)})`;
  else if (f.kind === 'changed' && ('old' in f || 'new' in f)) {
    const [a, b] = elidePair(f.old, f.new, VALUE_WIDTH, f.pattern);
    values = ` ${c('31', a)} → ${c('32', b)}`;
  } else if ((f.kind === 'removed' || f.kind === 'missing') && 'old' in f && f.pattern !== '') values = ` ${c('31', shortValue(f.old, VALUE_WIDTH, f.pattern))}`;
  else if ((f.kind === 'added' || f.kind === 'extra') && 'new' in f && f.pattern !== '') values = ` ${c('32', shortValue(f.new, VALUE_WIDTH, f.pattern))}`;
  return { what, values };
}

/** Ids of a finding's rows and then of its consequences' rows: every row it holds, in the order --rows lists them. */
export function rowsUnder(f: Finding): string[] {
  return f.consequences?.length ? [...f.rows, ...f.consequences.flatMap((k) => k.rows)] : f.rows;
}

/**
 * A real finding that breaks a ratification: "was ratified as 201 → 200, now
 * 201 → 500 (known[3]: reason)", for an added field "was ratified as added
 * "user", now added "admin" (…)"; undefined for others.
 */
export function brokenRatificationText(f: Finding): string | undefined {
  if (!f.ratified) return undefined;
  const added = f.kind === 'added' ? 'added ' : '';
  const was = ratifiedValuesText(f.kind, f.ratified) ?? '* → *';
  const now = !('old' in f || 'new' in f) ? 'other values' : added ? shortValue(f.new, VALUE_WIDTH, f.pattern) : elidePair(f.old, f.new, VALUE_WIDTH, f.pattern).join(' → ');
  return `was ratified as ${added}${was}, now ${added}${now} (known[${f.ratified.known}]: ${f.ratified.reason})`;
}

/** The line a self-check run (both captures of one build) says instead of listing stale known entries; undefined otherwise. */
export function sameBuildText(result: DiffResult): string | undefined {
  const n = result.sameBuild?.knownUnmet;
  return n ? `${plural(n, 'known entry', 'known entries')} matched nothing, as expected: both captures are of one build, so none of the ratified changes is in them.` : undefined;
}

/**
 * What noise and erasing rules hid, and what a replay did not send, one line
 * each (nothing disappears silently): `N rows hidden as noise (changed 2,
 * missing 1); …`, `hidden by rule normalize.paths[0] (response.body.token): 3
 * rows`, `not replayed: 7 entries of 3 other origins (bb replay skipped them)`.
 */
export function hiddenTexts(result: DiffResult): string[] {
  const out: string[] = [];
  const run = result.noiseRun;
  if (run) {
    const kinds = Object.entries(run.hidden.byKind).map(([k, n]) => `${k} ${n}`).join(', ');
    out.push(`${plural(run.hidden.rows, 'row')} hidden as noise${kinds ? ` (${kinds})` : ''}; ${run.path} differs from ${result.old.path} in ${plural(run.differences, 'row')}.`);
  }
  for (const r of result.hiddenByRules ?? []) out.push(`${ruleHiddenText(r)} (${ruleHiddenAdvice(r)}).`);
  const notReplayed = notReplayedText(result.notReplayed);
  if (notReplayed) out.push(notReplayed);
  if (result.shadowUnanswered) out.push(`${plural(result.shadowUnanswered, 'exchange')} left out: a mirror has no answer (bb's own error answer: reset, timed out, gone), as bb shadow counts errors.`);
  return out;
}

/** "3 rows", "1 row": a count with its noun. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The verdict every report leads with: MATCH, MATCH with N known, DIFF: N real findings (M differences), DIFF: N stale known. */
export function verdictText(result: DiffResult): string {
  const f = result.counts.findings;
  if (result.verdict === 'match') return f.known ? `MATCH with ${f.known} known` : 'MATCH';
  return result.counts.real ? `DIFF: ${plural(f.real, 'real finding')} (${plural(result.counts.real, 'difference')})` : `DIFF: ${result.staleKnown.length} stale known`;
}

/** Renders the result for a terminal: verdict, then one line per finding; `rows`: every row under its finding. */
export function renderText(result: DiffResult, opts: TextOptions): string {
  const c = (code: string, s: string) => (opts.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const lines: string[] = [];
  const { real, known, noise } = result.counts;
  const f = result.counts.findings;
  const stale = result.staleKnown.length;
  const verdict = c(result.verdict === 'match' ? '1;32' : '1;31', verdictText(result));
  const extras = [
    plural(result.counts.pairs, 'pair'),
    ...(real && known ? [`${plural(f.known, 'known finding')}`] : []),
    ...(noise ? [`${plural(f.noise, 'noise finding')}`] : []),
    ...(stale ? [`${stale} stale known`] : []),
  ];
  lines.push(`${verdict}  (${extras.join(', ')}; ${result.old.path} → ${result.new.path})`);

  const byId = new Map(result.differences.map((d) => [d.id, d]));
  // A row names the exchange of each side it points at (docs/frames-and-show.md "One name per thing": `#<seq>`), as bb show lists them.
  const exchanges = exchangesOf(result);
  const sides = (entry: string) => {
    const x = exchanges.get(entry);
    if (!x) return '';
    const named = [x.old !== undefined ? `old ${x.old}` : '', x.new !== undefined ? `new ${x.new}` : ''].filter(Boolean);
    return named.length ? `, ${named.join(' → ')}` : '';
  };
  const rowLine = (d: Difference) => {
    const [a, b] = elidePair(d.old, d.new, VALUE_WIDTH, d.path);
    const moved = movedLine(d);
    const change = moved !== undefined ? moved : d.kind === 'added' || d.kind === 'extra' ? c('32', `+ ${b}`) : d.kind === 'removed' || d.kind === 'missing' ? c('31', `- ${a}`) : `${c('31', a)} → ${c('32', b)}`;
    return `      [${d.id}] ${d.request} (${d.entry}${sides(d.entry)})${d.path ? ` ${d.path}` : ''}: ${change}`;
  };
  const section = (title: string, cls: Finding['class'], folded: boolean) => {
    const list = result.findings.filter((x) => x.class === cls);
    if (!list.length) return;
    lines.push('', c('1', title));
    for (const x of list) {
      const tag = cls === 'known' ? c('33', 'KNOWN-DIFF ') : cls === 'noise' ? c('2', 'NOISE ') : '';
      lines.push(`  ${tag}[${x.id}] ${findingLine(x, c)}`);
      const broken = brokenRatificationText(x);
      if (broken) lines.push(`      ${c('31', broken)}`);
      // Known and noise findings stay one line (their consequences are under them in --rows and the other reports).
      if (!folded || opts.rows) for (const k of consequenceLines(x, c)) lines.push(`      ${k}`);
      if (cls === 'known' && x.reason) lines.push(`      reason: ${x.reason}`);
      if (opts.rows) for (const id of rowsUnder(x)) lines.push(rowLine(byId.get(id)!));
      else if (!folded) {
        // Each request line once: the samples are distinct entries, two of them may be the same call.
        lines.push(c('2', `      e.g. ${[...new Set(x.samples.map((s) => s.request))].join(' · ')}`));
        const open = showCommand(x, result, exchanges);
        if (open) lines.push(c('2', `      ${open}`));
      }
    }
  };
  section('Real findings', 'real', false);
  section('Known findings', 'known', true);
  section('Noise findings (differ between two runs of the old build too)', 'noise', true);
  const hidden = hiddenTexts(result);
  if (hidden.length) lines.push('', ...hidden);
  if (stale) {
    lines.push('', c('1', 'Stale known entries (matched nothing: parity restored? remove them)'));
    for (const s of result.staleKnown) lines.push(`  known[${s.index}] where ${JSON.stringify(s.where)} path ${JSON.stringify(s.path)}: ${s.reason}`);
  }
  const sameBuild = sameBuildText(result);
  if (sameBuild) lines.push('', sameBuild);
  lines.push(...timingLines(result.timing, c));
  // The next step must run as printed: name the report bb known add reads, or say how to write it.
  const ratify = opts.report !== undefined && opts.report !== '-' ? `bb known add FINDING-ID --from ${opts.report} ratifies one.` : 'bb known add FINDING-ID --from report.json ratifies one (bb diff --json report.json writes it).';
  if (real && !opts.rows) lines.push('', c('2', `bb diff --rows lists every difference under its finding; ${ratify}`));
  return `${lines.join('\n')}\n`;
}
