// Shared by the bb compare tests: run the real CLI, write configs around the demo.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBb, type BbRun } from '../../helpers/cli.js';

/** Absolute paths the tests need. */
export const paths = {
  repo: fileURLToPath(new URL('../../../', import.meta.url)),
  demoDir: fileURLToPath(new URL('../../../scenario/compare/demo/', import.meta.url)),
  demoConfig: fileURLToPath(new URL('../../../scenario/compare/demo/bb.config.json', import.meta.url)),
  demoServer: fileURLToPath(new URL('../../../dist/scenario/compare/demo/server.js', import.meta.url)),
  demoScenario: fileURLToPath(new URL('../../../scenario/compare/demo/scenario.ts', import.meta.url)),
  fixtureServer: fileURLToPath(new URL('../fixtures/server.mjs', import.meta.url)),
};

/** How long a bb compare (or demo) run may take: two servers boot and a scenario runs. */
export const COMPARE_TIMEOUT_MS = 45_000;

/** Runs bb compare or bb demo to its end, killed after COMPARE_TIMEOUT_MS. */
export function runCompare(args: string[], env: NodeJS.ProcessEnv): Promise<BbRun> {
  return runBb(args, env, { timeoutMs: COMPARE_TIMEOUT_MS });
}

/** The demo config with absolute paths, its servers' args changed by `edit`, written into dir. */
export async function demoConfigWith(
  dir: string,
  name: string,
  edit: { oldArgs?: string[]; newArgs?: string[]; scenario?: string; extra?: Record<string, unknown> } = {},
): Promise<string> {
  const doc = JSON.parse(await readFile(paths.demoConfig, 'utf8'));
  doc.servers.old.args = [paths.demoServer, '--variant', 'old', ...(edit.oldArgs ?? [])];
  doc.servers.new.args = [paths.demoServer, '--variant', 'new', ...(edit.newArgs ?? [])];
  doc.servers.old.cwd = doc.servers.new.cwd = paths.demoDir;
  doc.scenario = edit.scenario ?? paths.demoScenario;
  Object.assign(doc, edit.extra ?? {});
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(doc, null, 2));
  return file;
}
