// The terminal report: verdict line first, then differences grouped by route,
// field pattern and kind with counts and samples, each sample with its stable
// id and old → new values elided around the change.
import type { DiffResult, Difference } from '../types.js';

/** Options for the text report. */
export interface TextOptions {
  /** ANSI colours (the CLI decides: TTY and no NO_COLOR). */
  color: boolean;
  /** Samples shown per group (default 3). */
  samples?: number;
}

const WIDTH = 60;

/** A value as short JSON-ish text. */
export function shortValue(v: unknown, max = WIDTH): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : v === undefined ? '∅' : JSON.stringify(v) ?? String(v);
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** old → new, both elided around the first and last changed characters. */
export function elidePair(a: unknown, b: unknown, max = WIDTH): [string, string] {
  const sa = a === undefined ? '∅' : JSON.stringify(a) ?? String(a);
  const sb = b === undefined ? '∅' : JSON.stringify(b) ?? String(b);
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

/** A reordered WebSocket row ("at 2: <message>" → "at 3: <message>") as "moved 2 → 3: <message>". */
function movedMessage(a: unknown, b: unknown): string | undefined {
  const ma = typeof a === 'string' ? /^at (\d+): ([^]*)$/.exec(a) : null;
  const mb = typeof b === 'string' ? /^at (\d+): ([^]*)$/.exec(b) : null;
  if (!ma || !mb || ma[2] !== mb[2]) return undefined;
  const what = ma[2]!.length > WIDTH ? `${ma[2]!.slice(0, WIDTH - 1)}…` : ma[2]!;
  return `moved ${ma[1]} → ${mb[1]}: ${what}`;
}

interface Group {
  route: string;
  pattern: string;
  kind: string;
  rows: Difference[];
  entries: Set<string>;
}

function groupsOf(diffs: Difference[]): Group[] {
  const map = new Map<string, Group>();
  for (const d of diffs) {
    const k = `${d.route}\n${d.pattern}\n${d.kind}`;
    let g = map.get(k);
    if (!g) map.set(k, (g = { route: d.route, pattern: d.pattern, kind: d.kind, rows: [], entries: new Set() }));
    g.rows.push(d);
    g.entries.add(d.entry);
  }
  return [...map.values()];
}

/** Renders the result for a terminal. */
export function renderText(result: DiffResult, opts: TextOptions): string {
  const c = (code: string, s: string) => (opts.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const samples = opts.samples ?? 3;
  const lines: string[] = [];
  const { real, known, noise } = result.counts;
  const stale = result.staleKnown.length;
  let verdict: string;
  if (result.verdict === 'match') verdict = c('1;32', known ? `MATCH with ${known} known` : 'MATCH');
  else verdict = c('1;31', real ? `DIFF: ${real} real` : `DIFF: ${stale} stale known`);
  const extras = [
    `${result.counts.pairs} pairs`,
    ...(real && known ? [`${known} known`] : []),
    ...(noise ? [`${noise} noise`] : []),
    ...(stale ? [`${stale} stale known`] : []),
  ];
  lines.push(`${verdict}  (${extras.join(', ')}; ${result.old.path} → ${result.new.path})`);

  const perRoute = new Map<string, number>();
  for (const p of result.pairs) perRoute.set(p.route, (perRoute.get(p.route) ?? 0) + 1);
  const section = (title: string, diffs: Difference[], showReason: boolean) => {
    if (!diffs.length) return;
    lines.push('', c('1', title));
    for (const g of groupsOf(diffs)) {
      const total = perRoute.get(g.route) ?? g.entries.size;
      const what = g.pattern === '' ? `entry ${g.kind}` : `${g.pattern} ${g.kind === 'changed' ? 'differs' : `is ${g.kind}`}`;
      const times = g.rows.length > g.entries.size ? ` (${g.rows.length} values)` : '';
      lines.push(`  ${what} in ${g.entries.size} of ${total} ${g.route}${times}`);
      for (const d of g.rows.slice(0, samples)) {
        const tag = d.class === 'known' ? c('33', 'KNOWN-DIFF ') : d.class === 'noise' ? c('2', 'NOISE ') : '';
        const [a, b] = elidePair(d.old, d.new);
        const moved = movedMessage(d.old, d.new);
        const change = moved !== undefined ? moved : d.kind === 'added' || d.kind === 'extra' ? c('32', `+ ${b}`) : d.kind === 'removed' || d.kind === 'missing' ? c('31', `- ${a}`) : `${c('31', a)} → ${c('32', b)}`;
        lines.push(`    ${tag}[${d.id}] ${d.entry}${d.path ? ` ${d.path}` : ''}: ${change}`);
        if (showReason && d.reason) lines.push(`      reason: ${d.reason}`);
      }
      if (g.rows.length > samples) lines.push(c('2', `    … ${g.rows.length - samples} more`));
    }
  };
  section('Differences', result.differences.filter((d) => d.class === 'real'), false);
  section('Known differences', result.differences.filter((d) => d.class === 'known'), true);
  section('Noise (differs between two runs of the old build too)', result.differences.filter((d) => d.class === 'noise'), false);
  if (stale) {
    lines.push('', c('1', 'Stale known entries (matched nothing: parity restored? remove them)'));
    for (const s of result.staleKnown) lines.push(`  known[${s.index}] where ${JSON.stringify(s.where)} path ${JSON.stringify(s.path)}: ${s.reason}`);
  }
  return `${lines.join('\n')}\n`;
}
