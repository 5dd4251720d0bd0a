// Prints benchmark tables as Markdown pipe tables, so a run's output can be
// pasted into README's "Performance" section as it is. Pure formatting.
import type { Spread } from './stats.js';

/** Formats a number for a table: thousands grouped, `digits` after the point; "—" when unknown. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Chooses digits from the magnitude: 3 significant figures for small values, whole numbers from 100. */
export function auto(value: number): string {
  if (!Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  return num(value, abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3);
}

/** "median (min–max)"; only the median when the rounds agree or there is one round. */
export function withSpread(s: Spread, format: (v: number) => string = auto): string {
  if (!Number.isFinite(s.median)) return '—';
  const m = format(s.median);
  const lo = format(s.min);
  const hi = format(s.max);
  return lo === hi ? m : `${m} (${lo}–${hi})`;
}

/** A ratio as "0.42×", with its spread. */
export function ratio(s: Spread): string {
  return withSpread(s, (v) => `${v.toFixed(2)}×`);
}

/** Renders a Markdown table; columns are padded so it reads in a terminal too. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** "PASS" or "MISS" with the figure and the target, for the targets list. */
export function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'n/a ' : ok ? 'PASS' : 'MISS';
}
