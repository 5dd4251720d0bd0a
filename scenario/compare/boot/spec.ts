// What a compare config says about a server under test: how to start it
// (a command, or a git ref of a repository) and how bb knows it is ready.
// Plain data, validated by config.ts; boot/server.ts acts on it.

/** How bb knows a server is ready. Several may be given: line first, then port, then health. */
export interface ReadinessSpec {
  /** A regex matched against each stdout line; JSON after the match is the readiness payload. */
  line?: string;
  /** A TCP port to probe on 127.0.0.1 (also the target when no payload gives one). */
  port?: number;
  /** A health URL (absolute, or a path on the target) that must answer 2xx. */
  health?: string;
}

/** The readiness used when a server gives none: a stdout line starting with READY. */
export const DEFAULT_READINESS: Readonly<ReadinessSpec> = Object.freeze({ line: '^READY\\b' });

/** Fields shared by both kinds of server. */
interface ServerSpecBase {
  /** Program to run; "node" means the Node running bb. Without args it runs through /bin/sh -c. */
  command: string;
  /** Arguments; when given, the command runs directly (no shell). */
  args?: string[];
  /** Extra environment, merged last over the hermetic base. */
  env?: Record<string, string>;
  /** Readiness; default: a stdout line starting with READY. */
  ready?: ReadinessSpec;
  /** Bound on boot time (default 30 s). */
  bootTimeoutMs?: number;
}

/** A server started from a command. */
export interface CommandServerSpec extends ServerSpecBase {
  /** Working directory (absolute; default bb's working directory). */
  cwd?: string;
}

/** A server started from a git ref: a worktree of that commit, installed once. */
export interface GitServerSpec extends ServerSpecBase {
  /** Repository path (absolute). */
  repo: string;
  /** Branch, tag or commit. */
  ref: string;
  /** Shell command run once in a fresh worktree, e.g. "npm ci". */
  install?: string;
  /** Working directory inside the worktree (relative; default its root). */
  cwd?: string;
}

/** Either kind of server. */
export type ServerSpec = CommandServerSpec | GitServerSpec;
