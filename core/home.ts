// bb's home folder (CA, redaction key, worktrees): BB_HOME when set and not
// empty, else ~/.bb. The one resolver; the caller hands in the environment
// (only the CLI and the package entry point read process.env).
import { join, resolve } from 'node:path';

/** Where bb's home is and whether the environment chose it. */
export interface BbHome {
  /** Absolute path. */
  path: string;
  /** True when BB_HOME set it (a journal's lost key may then be looked for there). */
  fromEnv: boolean;
}

/** Resolves bb's home from an environment and the user's home folder. */
export function bbHomeFrom(env: Readonly<Record<string, string | undefined>>, userHome: string): BbHome {
  const set = env['BB_HOME'];
  if (set) return { path: resolve(set), fromEnv: true };
  return { path: join(userHome, '.bb'), fromEnv: false };
}
