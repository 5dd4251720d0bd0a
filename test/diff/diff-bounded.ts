// The diff tests' way onto the bounded path (the one bb diff takes for
// captures over 64 MiB), forced on small captures.
import { diffCaptures, type DiffOptions, type DiffResult } from '../../diff/index.js';

/** bb diff on the bounded path (the one for files over 64 MiB), forced; its sides in this thread (`workers: false`) to keep tests quick. */
export function diffBounded(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<DiffResult> {
  return diffCaptures(oldPath, newPath, { ...options, boundedThreshold: 0, workers: false });
}
