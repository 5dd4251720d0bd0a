// `npm run bench` runs every benchmark area; `npm run bench -- proxy` one
// (several may be named); flags after the areas go to each area, e.g.
// `npm run bench -- proxy --quick`. Each area runs in its own process
// (bench/lib/area.ts through tsx) and prints its own tables.
// Benchmarks are programs that print tables, not tests: they never fail on a
// slow figure, only when they cannot run.
import { spawnSync } from 'node:child_process';

const AREAS = ['proxy', 'diff', 'tls', 'frames', 'replay', 'shadow', 'ui', 'ui-long'];
const root = new URL('..', import.meta.url).pathname;
const argv = process.argv.slice(2);
// Areas come first (bare words), then flags for every area.
const firstFlag = argv.findIndex((a) => a.startsWith('-'));
const areas = firstFlag < 0 ? argv : argv.slice(0, firstFlag);
const flags = firstFlag < 0 ? [] : argv.slice(firstFlag);
if (flags.includes('--help') || flags.includes('-h')) {
  console.log(`usage: npm run bench [-- <area>...] [--quick] [area flags]\nareas: ${AREAS.join(', ')} (default: all)`);
  process.exit(0);
}
const unknown = areas.find((a) => !AREAS.includes(a));
if (unknown) {
  console.error(`unknown benchmark area '${unknown}': pick among ${AREAS.join(', ')} (flags go after the areas)`);
  process.exit(2);
}

const started = Date.now();
let failed = 0;
for (const area of areas.length > 0 ? areas : AREAS) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/lib/area.ts', area, ...flags], { cwd: root, stdio: 'inherit' });
  // 3 = the area is not there yet (another engineer's file): noted, not a failure.
  if (result.status !== 0 && result.status !== 3) {
    failed++;
    console.error(`bench ${area} exited with ${result.status ?? result.signal}`);
  }
}
console.log(`\nbench: ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
process.exit(failed > 0 ? 1 : 0);
