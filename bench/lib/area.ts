// Runs one benchmark area in its own process: imports bench/<area>.ts and
// calls its exported `run(args)`. Started by bench/run.mjs through tsx:
//
//   node --import tsx bench/lib/area.ts <area> [args...]
//
// Exit codes: 0 done, 1 the area failed, 3 the area is absent or exports no run().
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [area, ...args] = process.argv.slice(2);
const file = fileURLToPath(new URL(`../${area}.ts`, import.meta.url));
if (!area || !existsSync(file)) {
  console.log(`\n## ${area}\n\nbench/${area}.ts is not there yet: skipped.`);
  process.exit(3);
}
const mod = (await import(file)) as { run?: (args: string[]) => Promise<void> | void };
if (typeof mod.run !== 'function') {
  console.log(`\n## ${area}\n\nbench/${area}.ts exports no run(args): skipped.`);
  process.exit(3);
}
try {
  await mod.run(args);
} catch (err) {
  console.error(`bench ${area} failed: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
}
