// The diff tests' way onto the bounded path (the one bb diff takes for
// captures over 64 MiB), forced on small captures.
import assert from 'node:assert/strict';
import { diffCaptures, validateDiffConfig, type DiffOptions, type DiffResult } from '../../diff/index.js';
import type { TempDir } from '../helpers/tmp.js';

/** bb diff on the bounded path (the one for files over 64 MiB), forced; its sides in this thread (`workers: false`) to keep tests quick. */
export function diffBounded(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<DiffResult> {
  return diffCaptures(oldPath, newPath, { ...options, boundedThreshold: 0, workers: false });
}

/** Two captures written into `dir` under fresh names and diffed on both paths: [in memory, bounded]. */
export async function diffBothPaths(dir: TempDir, a: unknown, b: unknown): Promise<[DiffResult, DiffResult]> {
  const name = `${Math.random()}`;
  const oldPath = await dir.write(`${name}-old.har`, a);
  const newPath = await dir.write(`${name}-new.har`, b);
  return [await diffCaptures(oldPath, newPath), await diffBounded(oldPath, newPath)];
}

/** Two captures diffed on both paths with an optional config (validated), which must agree; the in-memory result. */
export async function diffAgreeing(dir: TempDir, a: unknown, b: unknown, config?: unknown): Promise<DiffResult> {
  const name = `${Math.random()}`;
  const [oldPath, newPath] = [await dir.write(`${name}-a.har`, a), await dir.write(`${name}-b.har`, b)];
  const options = config ? { config: validateDiffConfig(config) } : {};
  const inMemory = await diffCaptures(oldPath, newPath, options);
  const bounded = await diffBounded(oldPath, newPath, options);
  assert.deepEqual({ ...bounded, old: inMemory.old, new: inMemory.new }, inMemory, 'the bounded path agrees');
  return inMemory;
}
