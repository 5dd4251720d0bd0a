// A server runs in its own process group (spawned detached), so stopping it
// can signal the whole group: npm and shell wrappers leave grandchildren that
// a signal to one pid misses. Stopping is SIGTERM to the group, then SIGKILL
// after a grace period. RunningServers is the set one run keeps, so that
// Ctrl-C, the end of the run and the process's exit reach every server.
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a server process ended. */
export interface ExitInfo {
  /** Exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it, or null. */
  signal: NodeJS.Signals | null;
}

/** "exit code 1" or "signal SIGKILL". */
export function describeExit(exit: ExitInfo): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/** Sends a signal to every process of a group; a group already gone is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * True while some process of the group is alive. Zombies do not count: an
 * orphaned grandchild may wait for a reaper that is slow or absent (in some
 * containers pid 1 does not reap), and a zombie runs nothing.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command (which may hold spaces and parentheses): state ppid pgrp ...
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[2]) === pgid && rest[0] !== 'Z') return true;
  }
  return false;
}

/** Ends a group: SIGTERM, SIGKILL after `graceMs` if some process is left, then waits (boundedly) for the leader's exit. */
export async function stopGroup(pgid: number, graceMs: number, exited: Promise<unknown>): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const graceEnd = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < graceEnd) await sleep(25);
  if (groupAlive(pgid)) {
    signalGroup(pgid, 'SIGKILL');
    const killEnd = Date.now() + 2000;
    while (groupAlive(pgid) && Date.now() < killEnd) await sleep(25);
  }
  await Promise.race([exited, sleep(1000)]);
}

/** What RunningServers needs of a server. */
export interface GroupMember {
  /** Its process group id (the spawned pid), or -1 when it never started. */
  readonly pid: number;
  /** Stops its group and cleans up after it. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The servers one run has booted whose process groups may still be alive.
 * The run owns it: it stops them all when aborted and when it ends; the CLI
 * may kill them synchronously as a last resort at process exit.
 */
export class RunningServers {
  private readonly members = new Set<GroupMember>();

  /** Keeps a server that has just been spawned. */
  add(server: GroupMember): void {
    this.members.add(server);
  }

  /** Forgets a server whose group is gone. */
  release(server: GroupMember): void {
    this.members.delete(server);
  }

  /** Stops every server still running (Ctrl-C, the end of the run). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.members].map((s) => s.stop()));
  }

  /** Last resort at process exit: SIGKILL every process group still known. Synchronous. */
  killAllSync(): void {
    for (const { pid } of this.members) if (pid > 0) signalGroup(pid, 'SIGKILL');
  }
}
