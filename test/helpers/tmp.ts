// Temporary folders for tests: a fresh folder under the OS temp folder,
// removed (recursively) when whatever owns it ends, so no test leaves one
// behind and none shares one with another by accident.
import { mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atFileEnd } from './cleanups.js';

/** What can own a folder: a test's context (`t`), a Cleanups list; anything with after(fn). */
export interface Owner {
  after(fn: () => unknown): unknown;
}

/** A temp folder and a few conveniences. */
export interface TempDir {
  /** The folder's absolute path. */
  dir: string;
  /** A bb home inside it, not created yet (bb makes it, owner-only, on first use). */
  bbHome: string;
  /** `join(dir, ...names)`. */
  path(...names: string[]): string;
  /** Writes a file: a string or Buffer as is, anything else as JSON (indented, as people save HARs); resolves to its path. */
  write(name: string, doc: unknown): Promise<string>;
  /** Removes the folder now (it is removed when its owner ends anyway). */
  remove(): Promise<void>;
}

/**
 * A fresh folder `<tmp>/<prefix>XXXXXX`, removed when `owner` ends (a test's
 * `t`, a Cleanups list), or without an owner when the test file ends. Safe to
 * call anywhere: at the top of a file, in a describe body, a hook or a test.
 */
export function tempDir(owner?: Owner, prefix = 'bb-test-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // Retries: a child process that is being stopped may still be writing into it.
  const remove = () => rm(dir, { recursive: true, force: true, maxRetries: 5 });
  if (owner) owner.after(remove);
  else atFileEnd(remove);
  return {
    dir,
    bbHome: join(dir, 'home'),
    path: (...names) => join(dir, ...names),
    async write(name, doc) {
      const path = join(dir, name);
      await writeFile(path, typeof doc === 'string' || Buffer.isBuffer(doc) ? doc : JSON.stringify(doc, null, 1));
      return path;
    },
    remove,
  };
}
