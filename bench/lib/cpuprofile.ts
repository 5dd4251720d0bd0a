// Reads a V8 .cpuprofile (node --cpu-prof) and lists where self time went,
// by function and source position: enough to point at a hot path without
// opening DevTools. Pure apart from reading the file.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** One line of the summary. */
export interface HotSpot {
  /** "functionName file:line" (file relative to the repo when inside it). */
  where: string;
  /** Self time, ms. */
  selfMs: number;
  /** Share of all sampled time, 0..1. */
  share: number;
}

/** The top `limit` functions by self time over one or more .cpuprofile files; idle time is left out of the shares. */
export function hotSpots(paths: string | string[], limit = 25, repoRoot = ''): HotSpot[] {
  const self = new Map<string, number>();
  let total = 0;
  for (const path of Array.isArray(paths) ? paths : [paths]) {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    for (let i = 0; i < profile.samples.length; i++) {
      const node = byId.get(profile.samples[i]!);
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      if (!node || node.callFrame.functionName === '(idle)') continue;
      total += dt;
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url.replace(/^file:\/\//, '').replace(repoRoot, '');
      const where = `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
      self.set(where, (self.get(where) ?? 0) + dt);
    }
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([where, selfMs]) => ({ where, selfMs, share: total > 0 ? selfMs / total : 0 }));
}

/**
 * Total time (self and everything below) of the functions named `names`, over
 * one or more .cpuprofile files: a sample counts once per name on its stack,
 * so recursion is not counted twice. Answers "how much of the run is under X".
 */
export function inclusiveMs(paths: string | string[], names: readonly string[]): Map<string, number> {
  const out = new Map<string, number>(names.map((n) => [n, 0]));
  for (const path of Array.isArray(paths) ? paths : [paths]) {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile & { nodes: Array<ProfileNode & { children?: number[] }> };
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    // The names on each node's stack, memoized per node.
    const under = new Map<number, Set<string>>();
    const namesOf = (id: number): Set<string> => {
      let s = under.get(id);
      if (s) return s;
      const p = parent.get(id);
      s = new Set(p === undefined ? [] : namesOf(p));
      const fn = byId.get(id)?.callFrame.functionName ?? '';
      if (out.has(fn)) s.add(fn);
      under.set(id, s);
      return s;
    };
    for (let i = 0; i < profile.samples.length; i++) {
      const dt = (profile.timeDeltas[i] ?? 0) / 1000;
      for (const n of namesOf(profile.samples[i]!)) out.set(n, out.get(n)! + dt);
    }
  }
  return out;
}

/** Names the area a stack frame's code belongs to (its url relative to the repo, its function name), or undefined to look further up the stack. */
export type AreaOf = (file: string, functionName: string) => string | undefined;

/**
 * Self time summed by area over one or more .cpuprofile files: each sample
 * goes to the area of the innermost frame on its stack that `areaOf` names
 * (so a native write under the journal's flush counts as journal writes, the
 * same write under the relay as relay writes); `(garbage collector)` is its
 * own area, and a stack no frame of which is named falls in `fallback`.
 * Idle time is left out. Returns ms per area.
 */
export function areaTimes(paths: string | string[], areaOf: AreaOf, repoRoot = '', fallback = 'node (sockets, streams, event loop)'): Map<string, number> {
  const out = new Map<string, number>();
  for (const path of Array.isArray(paths) ? paths : [paths]) {
    const { profile, byId, areaOfNode } = readWithAreas(path, areaOf, repoRoot, fallback);
    for (let i = 0; i < profile.samples.length; i++) {
      const node = byId.get(profile.samples[i]!);
      if (!node || node.callFrame.functionName === '(idle)') continue;
      const area = areaOfNode(node.id);
      out.set(area, (out.get(area) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
    }
  }
  return out;
}

/** A profile read, its nodes by id, and the area of a node (areaTimes' rule: the innermost frame `areaOf` names; GC its own). */
function readWithAreas(path: string, areaOf: AreaOf, repoRoot: string, fallback: string): { profile: Profile; byId: Map<number, ProfileNode>; areaOfNode: (id: number) => string } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile & { nodes: Array<ProfileNode & { children?: number[] }> };
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // The area of each node, found once and kept (many samples share a node).
  const known = new Map<number, string>();
  const areaOfNode = (id: number): string => {
    const was = known.get(id);
    if (was !== undefined) return was;
    const node = byId.get(id);
    let area: string;
    if (!node) area = fallback;
    else if (node.callFrame.functionName === '(garbage collector)') area = 'GC';
    else {
      const file = node.callFrame.url.replace(/^file:\/\//, '').replace(repoRoot, '');
      const up = parent.get(id);
      area = (file ? areaOf(file, node.callFrame.functionName) : undefined) ?? (up !== undefined ? areaOfNode(up) : fallback);
    }
    known.set(id, area);
    return area;
  };
  return { profile, byId, areaOfNode };
}

/** A profile's busy stretches: how long the thread ran between idle moments, and what ran in the long ones. */
export interface Stretches {
  /** Each stretch's length, ms, in time order. */
  lengths: number[];
  /** Self time by area (areaTimes' areas) over every stretch, and over those at least `longMs` long, ms. */
  all: Map<string, number>;
  long: Map<string, number>;
  /** Stretches left out because they ran the `drop` area (a profiler's own start and stop). */
  dropped: number;
}

/**
 * The thread's busy stretches in one .cpuprofile: runs of samples that are
 * not `(idle)`, joined across idle gaps shorter than `joinMs` (a turn of the
 * event loop that finds more work at once). A request that arrives during a
 * stretch waits for it: their lengths are the queue a relay's tail latency
 * is made of, where a profile's totals say only how much work there was.
 * Each sample's time goes to the area `areaOf` names, as in areaTimes; a
 * stretch with any sample in the area `drop` is left out whole (the
 * harness's work, not the thread's: counted in `dropped`).
 */
export function busyStretches(path: string, areaOf: AreaOf, opts: { repoRoot?: string; longMs?: number; joinMs?: number; drop?: string } = {}, fallback = 'node (sockets, streams, event loop)'): Stretches {
  const { repoRoot = '', longMs = 2, joinMs = 0.2, drop } = opts;
  const { profile, byId, areaOfNode } = readWithAreas(path, areaOf, repoRoot, fallback);
  const out: Stretches = { lengths: [], all: new Map(), long: new Map(), dropped: 0 };
  let t = 0;
  let open: { from: number; to: number; areas: Map<string, number> } | undefined;
  const close = (): void => {
    if (!open) return;
    if (drop !== undefined && open.areas.has(drop)) {
      out.dropped++;
      open = undefined;
      return;
    }
    const length = (open.to - open.from) / 1000;
    out.lengths.push(length);
    for (const [area, us] of open.areas) {
      out.all.set(area, (out.all.get(area) ?? 0) + us / 1000);
      if (length >= longMs) out.long.set(area, (out.long.get(area) ?? 0) + us / 1000);
    }
    open = undefined;
  };
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    const node = byId.get(profile.samples[i]!);
    if (!node || node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(root)') {
      if (open && t - open.to >= joinMs * 1000) close();
      continue;
    }
    // A sample stands for the time since the one before it: the stretch began then.
    if (!open) open = { from: t - dt, to: t, areas: new Map() };
    open.to = t;
    const area = areaOfNode(node.id);
    open.areas.set(area, (open.areas.get(area) ?? 0) + dt);
  }
  close();
  return out;
}
