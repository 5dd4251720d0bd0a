// Processes that keep a core busy, for benches of a loaded machine
// (bench/shadow-drain.ts, bench/wakeup.ts). Each spins for `seconds` and then
// ends by itself (a bench that dies leaves no spinner behind); the caller ends
// them earlier by PID (ChildProcess.kill).
import { spawn, type ChildProcess } from 'node:child_process';

/** Starts `count` spinning processes, each run through `prefix` (e.g. ['nice', '-n', '19']) and ending after `seconds`. */
export function spinners(count: number, seconds: number, prefix: readonly string[] = []): ChildProcess[] {
  const cmd = [...prefix, process.execPath, '-e', `for (const end = Date.now() + ${Math.round(seconds * 1000)}; Date.now() < end; );`];
  return Array.from({ length: count }, () => spawn(cmd[0]!, cmd.slice(1), { stdio: 'ignore' }));
}
