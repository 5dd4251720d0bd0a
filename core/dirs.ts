// Making a folder and its missing parents, one level at a time. Node's own
// `mkdir(path, { recursive: true })` never returns when a parent is a
// pseudo-file system that answers ENOENT to every mkdir (`--out
// /proc/nope/x.har`: a loop at full CPU that ignores SIGINT and SIGTERM, in
// Node 20). Here the first missing level that cannot be made fails with its
// errno error, as for any other unwritable place.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const existsNow = (p: string): boolean => {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
};

/** The levels of `path` (absolute) that do not exist yet, outermost first. */
function missingLevels(path: string): string[] {
  const levels: string[] = [];
  for (let p = resolve(path); !existsNow(p); p = dirname(p)) {
    levels.unshift(p);
    if (dirname(p) === p) break;
  }
  return levels;
}

/** Creates `path` and its missing parents (each with `mode`, when given); the first level that cannot be made throws its errno error. Returns the first folder it made, or undefined when `path` existed. */
export function makeDirsSync(path: string, mode?: number): string | undefined {
  const levels = missingLevels(path);
  for (const level of levels) {
    try {
      mkdirSync(level, mode === undefined ? undefined : { mode });
    } catch (err) {
      // Another process made it meanwhile (two captures starting on a fresh home): it is there, as wanted.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  // A path that exists but is no folder: mkdir says so, as `recursive` did.
  if (!levels.length && !statSync(path).isDirectory()) mkdirSync(path);
  return levels[0];
}
