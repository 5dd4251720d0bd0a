// bb's own TypeScript sources, for tests that read the tree itself (the
// import graph, the table of codes).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The folders of bb's sources, lowest layer first. */
export const SOURCE_FOLDERS = ['core', 'proxy', 'capture', 'diff', 'inspect', 'ui', 'scenario', 'cli'] as const;

/** Every .ts file (declarations aside) under a folder, as absolute paths. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The sources of every folder plus the package entry point. */
export function allSources(): string[] {
  return [...SOURCE_FOLDERS.flatMap((f) => sourceFiles(join(repoRoot, f))), join(repoRoot, 'index.ts')];
}
