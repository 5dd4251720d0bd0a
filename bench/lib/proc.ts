// What Linux says about a process: CPU time from /proc/<pid>/stat, resident
// memory from /proc/<pid>/status. The only file in bench/ that reads /proc.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second (getconf CLK_TCK; 100 when unknown). */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** User + system CPU clock ticks in a /proc stat line (a process's, or one thread's under task/). */
function statCpuTicks(stat: string): number {
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) are at 11 and 12 after the state field.
  return Number(fields[11]) + Number(fields[12]);
}

/** User + system CPU seconds the process has used so far (NaN when it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    return statCpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

function statusField(pid: number, name: string): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size now, MiB. */
export function rssMiB(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/** Peak resident set size (VmHWM) since start or the last resetPeakRss, MiB. */
export function peakRssMiB(pid: number): number {
  return statusField(pid, 'VmHWM');
}

/** Resets the process's peak RSS to its current RSS (clear_refs 5, Linux ≥ 4.0); false when not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU ms so far of each thread of a process (/proc/<pid>/task), keyed "tid name" (a profile's split by thread: main, workers, V8's helpers). */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    out.set(`${tid} ${name}`, (statCpuTicks(stat) * 1000) / clockTicks());
  }
  return out;
}

/** CPU ms so far of a process's main thread (its own tid) and of its other threads (V8's helpers, libuv's pool, workers). */
export function mainAndOtherCpuMs(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const [thread, ms] of threadCpuMs(pid)) {
    if (thread.startsWith(`${pid} `)) main += ms;
    else others += ms;
  }
  return { main, others };
}

/** The process's read and write system calls so far (/proc/<pid>/io: syscr, syscw). */
export function syscallCounts(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
  return { reads: field('syscr'), writes: field('syscw') };
}
