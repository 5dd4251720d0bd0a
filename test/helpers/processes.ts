// Whether a process is still there, for tests that check bb (or a server it
// started) left nothing running.
import { readFileSync } from 'node:fs';

/** True when pid names a live process: it exists and is not a zombie (Linux: /proc/PID/stat). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
