// The proxy benchmarks' CPU profiles read by area of bb (bench/profiles/README.md):
// which folder of the built code each sampled frame belongs to, and the
// per-operation table printed after a profiled run (bench/proxy.ts, bench/proxy-h2.ts).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { benchPath } from './child.js';
import { areaTimes, hotSpots } from './cpuprofile.js';

/** The area of the profiler's own start and stop (node:inspector's dispatch): the harness's, not bb's. */
export const PROFILER_AREA = 'profiler (harness)';

/**
 * The area of bb a frame of the built code belongs to (dist/<folder>/<file>.js), for the per-exchange
 * table of the profiles: the relay (tap I/O), parsing, facts, the journal (encoding, writes), redaction.
 */
export function bbArea(file: string, functionName: string): string | undefined {
  // The profiler's own start and stop (node:inspector's dispatch): the harness, not bb.
  if (file === 'node:inspector') return PROFILER_AREA;
  const m = /(?:^|\/)dist\/(.+)\.js$/.exec(file);
  if (!m) return undefined;
  const mod = m[1]!;
  if (mod === 'capture/journal') return /^(flushNow|writeAll|writeAllv)$/.test(functionName) ? 'journal writes (fs)' : 'journal encoding';
  if (/^capture\/(recorder|journal-lines|journal-fold|line-buffer|grpc)$/.test(mod)) return 'journal encoding';
  if (mod === 'capture/body-seal' || mod.startsWith('capture/redact')) return 'redaction + sealing';
  if (mod.startsWith('capture/')) return 'facts (capture listener)';
  if (mod === 'proxy/events' || mod === 'proxy/connection') return 'facts (bus)';
  if (/^proxy\/(http1\/(parser|head|lines)|ws-frames|ws-inflate|h2\/)/.test(mod)) return 'tap parsing';
  if (mod.startsWith('proxy/')) return 'relay (tap, socket writes)';
  return 'other bb';
}

/** bbArea, with a shadow's own pieces named: the tee's dispatch, and the mirror clients (their lanes, sockets, parsing, value binding). */
export function shadowArea(file: string, functionName: string): string | undefined {
  if (/dist\/scenario\/shadow\/(tee|after-turn|run|safe|route)\.js$/.test(file)) return 'mirror dispatch (tee, after-turn)';
  if (/dist\/(scenario\/shadow\/mirror[^/]*|scenario\/replay\/[^/]+|diff\/bind\/[^/]+)\.js$/.test(file)) return 'mirror clients (lanes, requests, answers, binding)';
  return bbArea(file, functionName);
}

/**
 * Prints where bb spent its CPU per workload and configuration (profiles of the measured runs only, named
 * `<config>.<workload>.<round>.cpuprofile`): top functions, then µs per operation by area (`profiledOps`: operations per file).
 */
export function printProfile(dir: string, keep: string | undefined, profiledOps: ReadonlyMap<string, number>): void {
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    // no profile written
  }
  if (files.length === 0) {
    console.log('\nno CPU profile was written');
    return;
  }
  if (keep) {
    mkdirSync(keep, { recursive: true });
    for (const f of files) copyFileSync(join(dir, f), join(keep, f));
  }
  const root = benchPath('..').replace(/\/?$/, '/');
  const groups = new Map<string, string[]>();
  for (const f of files.sort()) {
    const key = f.split('.').slice(0, 2).join(' '); // "bb small"
    groups.set(key, [...(groups.get(key) ?? []), join(dir, f)]);
  }
  for (const [key, paths] of groups) {
    const spots = hotSpots(paths, 25, root);
    console.log(`\n### CPU profile: ${key} (self time of the measured rounds, idle excluded, top 25)\n`);
    for (const h of spots) console.log(`${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(6)} ms  ${h.where}`);
    const ops = paths.reduce((n, p) => n + (profiledOps.get(p) ?? 0), 0);
    if (ops === 0) continue;
    const areas = [...areaTimes(paths, bbArea, root).entries()].sort((a, b) => b[1] - a[1]);
    const total = areas.reduce((n, [, ms]) => n + ms, 0);
    console.log(`\nby area, µs per operation (${ops} operations; innermost bb frame on the stack decides):\n`);
    for (const [area, ms] of areas) console.log(`${((ms * 1000) / ops).toFixed(2).padStart(8)} µs  ${area}`);
    console.log(`${((total * 1000) / ops).toFixed(2).padStart(8)} µs  total sampled`);
  }
}
