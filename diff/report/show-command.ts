// What to do next with a finding: the `bb show` command that opens its first
// sample's exchange whole (docs/frames-and-show.md "One name per thing":
// `--entry '#<seq>'`), in the capture where it is seen best: the new one,
// unless the entry is missing there. The text and HTML reports print it
// under the finding's samples.
import type { DiffResult, Finding } from '../types.js';

/** A path as a POSIX shell word: as it is when it holds no special character, else single-quoted. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The exchanges (`#<seq>` per side) of each pair, by entry id, for showCommand. */
export function exchangesOf(result: Pick<DiffResult, 'pairs'>): Map<string, { old?: string; new?: string }> {
  return new Map(result.pairs.flatMap((p) => (p.exchange ? [[p.id, p.exchange] as const] : [])));
}

/** `bb show new.har --entry '#9' --body` for a finding's first sample; undefined when it has none with a recorded exchange (a timing finding). */
export function showCommand(f: Pick<Finding, 'samples'>, result: Pick<DiffResult, 'old' | 'new'>, exchanges: ReadonlyMap<string, { old?: string; new?: string }>): string | undefined {
  const first = f.samples[0];
  const x = first && exchanges.get(first.id);
  if (!x) return undefined;
  const [file, name] = x.new !== undefined ? [result.new.path, x.new] : x.old !== undefined ? [result.old.path, x.old] : [];
  return file === undefined ? undefined : `bb show ${shellWord(file)} --entry '${name}' --body`;
}
