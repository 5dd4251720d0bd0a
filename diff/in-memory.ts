// bb diff over captures already in memory (bb shadow's live batches): the
// same stages and options as diffCaptures, but the read stage opens each side
// from a HAR object instead of a file, so a batch is not written out and
// parsed back. The HARs are checked as a file would be (capture's
// checkCapture, which fills missing optional fields in place); their names
// stand where the result shows paths.
import { checkCapture, type Har } from '../capture/index.js';
import { createContext, type DiffOptions } from './context.js';
import { diffPipe, runStages } from './stages.js';
import { MemoryStore } from './store/memory.js';
import type { DiffResult } from './types.js';

/** A capture in memory and the name the result gives it. */
export interface NamedHar {
  /** Shown where a file's path would be (result.old.path, noiseRun.path). */
  name: string;
  har: Har;
  /**
   * Values bound before the capture's first entry, when it is one part of a
   * longer timeline (`bb shadow` compares its captures in batches): they are
   * compared through the binding, as the whole timeline's would be.
   */
  bound?: ReadonlySet<string>;
  /** Which values bound before are ids by where they stood earlier in the timeline (BoundSet.ids): asked of each bound value. */
  ids?: { has(value: string): boolean };
}

/** Compares two captures in memory (and a second old run for noise) as diffCaptures compares files; the names must differ. */
export async function diffHars(old: NamedHar, next: NamedHar, options: Omit<DiffOptions, 'noisePath'> & { noise?: NamedHar } = {}): Promise<DiffResult> {
  const { noise, ...rest } = options;
  const byName = new Map([old, next, ...(noise ? [noise] : [])].map((h) => [h.name, h]));
  if (byName.size !== (noise ? 3 : 2)) throw new Error('diffHars: each capture needs its own name');
  const pipe = diffPipe();
  options.stages?.(pipe);
  // Also the noise run's read stage (it runs this run's stages): every side by its name.
  pipe.replace('read', {
    name: 'read',
    part: 'read',
    run: async (ctx) => {
      ctx.storeKind = 'memory';
      const open = (which: 'old' | 'new') => {
        const named = byName.get(ctx[which].path);
        return MemoryStore.of(ctx, which, checkCapture(ctx[which].path, named?.har, { allowIncomplete: ctx.options.allowIncomplete }), named?.bound, named?.ids);
      };
      ctx.old.store = await open('old');
      ctx.new.store = await open('new');
    },
  });
  return runStages(createContext(old.name, next.name, { ...rest, ...(noise ? { noisePath: noise.name } : {}) }), pipe.list());
}
