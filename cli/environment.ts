// What bb takes from its environment, read once at start-up into a frozen
// object that main.ts hands every command. Nothing below cli/ reads
// process.env: commands pass what a layer needs as options (the hermetic
// server boot gets the parent environment as `hostEnv`).
import { homedir } from 'node:os';
import { bbHomeFrom, type BbHome } from '../core/index.js';

/** The environment as bb uses it. */
export interface BbEnvironment {
  /** bb's home (BB_HOME, else ~/.bb). */
  readonly home: Readonly<BbHome>;
  /** BB_PROGRESS_AFTER_MS: delay before progress lines show (tests set 0); undefined = the default ~2 s. */
  readonly progressAfterMs: number | undefined;
  /** BB_DIFF_BOUNDED_BYTES: capture size past which bb diff takes the bounded path; undefined = the default. */
  readonly diffBoundedBytes: number | undefined;
  /** BB_DIFF_WORKERS=0 runs the bounded diff's sides in the main thread. */
  readonly diffWorkers: boolean;
  /** BB_DIFF_STAGE_TIMES=1 prints each diff stage's wall time on stderr (the diff benchmark reads it). */
  readonly diffStageTimes: boolean;
  /** COLUMNS, when a positive number. */
  readonly columns: number | undefined;
  /** NO_COLOR / FORCE_COLOR as tty.ts reads them. */
  readonly color: { readonly no: boolean; readonly force: boolean };
  /** NODE_EXTRA_CA_CERTS: Node adds that file to its roots only while bb passes none of its own (read when --upstream-ca needs it). */
  readonly nodeExtraCaFile: string | undefined;
  /** The whole parent environment, for children bb starts (servers, worktree installs). */
  readonly host: Readonly<NodeJS.ProcessEnv>;
}

function count(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  const v = Number(text);
  return text !== undefined && text !== '' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** Reads bb's environment once; the result is frozen. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env, userHome: string = homedir()): BbEnvironment {
  const columns = count(env, 'COLUMNS');
  return Object.freeze({
    home: Object.freeze(bbHomeFrom(env, userHome)),
    progressAfterMs: count(env, 'BB_PROGRESS_AFTER_MS'),
    diffBoundedBytes: count(env, 'BB_DIFF_BOUNDED_BYTES'),
    diffWorkers: env['BB_DIFF_WORKERS'] !== '0',
    diffStageTimes: env['BB_DIFF_STAGE_TIMES'] === '1',
    columns: columns !== undefined && columns > 0 ? columns : undefined,
    color: Object.freeze({
      no: env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '',
      force: env['FORCE_COLOR'] !== undefined && env['FORCE_COLOR'] !== '0',
    }),
    nodeExtraCaFile: env['NODE_EXTRA_CA_CERTS'] || undefined,
    host: Object.freeze({ ...env }),
  });
}
