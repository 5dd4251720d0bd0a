// The diff tests' way onto the bounded path (the one bb diff takes for
// captures over 64 MiB), forced on small captures.
import { diffCaptures, type DiffOptions, type DiffResult } from '../../diff/index.js';

/** bb diff on the bounded path (the one for files over 64 MiB), forced; its sides in this thread (BB_DIFF_WORKERS=0) to keep tests quick. */
export async function diffBounded(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<DiffResult> {
  process.env.BB_DIFF_WORKERS = '0';
  try {
    return await diffCaptures(oldPath, newPath, { ...options, boundedThreshold: 0 });
  } finally {
    delete process.env.BB_DIFF_WORKERS;
  }
}
