// Flags of a benchmark area (`npm run bench -- <area> --runs 3`): pure parsing.

/** The number after `flag` in argv (e.g. '--runs'), or `fallback`; a sentence when it is not a positive number. */
export function positiveFlag(argv: readonly string[], flag: string, fallback: number): number {
  const at = argv.indexOf(flag);
  const v = at >= 0 ? Number(argv[at + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${flag} needs a positive number, got '${argv[at + 1]}'`);
  return v;
}
