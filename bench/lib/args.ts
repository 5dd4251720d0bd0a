// Flags of a benchmark area (`npm run bench -- <area> --runs 3`): pure parsing.

/** The number after `flag` in argv (e.g. '--runs'), or `fallback`; a sentence when it is not a positive number. */
export function positiveFlag(argv: readonly string[], flag: string, fallback: number): number {
  const at = argv.indexOf(flag);
  const v = at >= 0 ? Number(argv[at + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${flag} needs a positive number, got '${argv[at + 1]}'`);
  return v;
}

/**
 * Each named flag's number (`--<name> N`), else its default: `[full, quick]` (by `--quick`) or one value for both;
 * rounded to a whole number when `round` (counts); a sentence when one is not positive.
 */
export function positiveFlags<K extends string>(
  argv: readonly string[],
  defaults: Record<K, number | readonly [full: number, quick: number]>,
  round = false,
): Record<K, number> {
  const quick = argv.includes('--quick');
  const out = {} as Record<K, number>;
  for (const name of Object.keys(defaults) as K[]) {
    const d = defaults[name];
    const v = positiveFlag(argv, `--${name}`, typeof d === 'number' ? d : d[quick ? 1 : 0]);
    out[name] = round ? Math.round(v) : v;
  }
  return out;
}

/** The comma-separated names after `flag` (`--only ws,sse`, spaces around a name ignored), or undefined without the flag; with `allowed`, a sentence for a name not in it. */
export function listFlag<T extends string>(argv: readonly string[], flag: string, allowed?: readonly T[]): T[] | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const names = String(argv[at + 1] ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0) throw new Error(`${flag} needs a comma-separated list`);
  for (const n of names) if (allowed && !allowed.includes(n as T)) throw new Error(`${flag}: '${n}' is not one of ${allowed.join(', ')}`);
  return names as T[];
}
