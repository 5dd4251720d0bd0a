// The one way bb writes a file a user named (a HAR, a report): refused when
// something is already at the path (a file, a folder, a symlink, dangling or
// not) unless --force; written to a fresh `<path>.<pid>-<n>.tmp` opened
// exclusively (O_EXCL: never through a symlink planted there), fsynced, then
// renamed over the path — so a reader never sees half a file and --force
// replaces a symlink itself, never the file it points to.
import { lstatSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { BbError, makeDirsSync } from '../core/index.js';

/** What is being written, for the sentences a refusal says. */
export interface OutFileOptions {
  /** Replace what is at the path (--force). */
  force?: boolean;
  /** File mode of the new file (default 0o600: captures and reports can hold traffic). */
  mode?: number;
  /** The flag that named the path, as the sentences say it (default "--out"). */
  what?: string;
  /** The code of a failure to write there (default BB_OUT_UNWRITABLE; reports say BB_REPORT_UNWRITABLE). */
  unwritable?: 'BB_OUT_UNWRITABLE' | 'BB_REPORT_UNWRITABLE';
}

/** A file being written: write through `handle`, then commit (fsync + rename) or abort. */
export interface OutFile {
  /** The temporary file, opened for writing. */
  handle: FileHandle;
  /** Fsyncs, closes and renames the temporary file over the path (a failure removes it and is rethrown as it came). */
  commit(): Promise<void>;
  /** Closes and removes the temporary file; the path is left as it was. */
  abort(): Promise<void>;
}

let serial = 0;

/** The errno code of a failure, or its message. */
const reason = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/**
 * Throws BB_OUT_EXISTS when something is at `path` and `force` is not set;
 * BB_OUT_UNWRITABLE when a folder is there, or the path runs under a file.
 */
export function checkOutPath(path: string, opts: OutFileOptions = {}): void {
  const what = opts.what ?? '--out';
  let found;
  try {
    found = lstatSync(path);
  } catch (err) {
    const code = reason(err);
    if (code === 'ENOENT') return;
    throw unwritable(path, what, err, opts.unwritable);
  }
  if (found.isDirectory()) throw new BbError(opts.unwritable ?? 'BB_OUT_UNWRITABLE', `cannot write ${what} ${path}: it is a folder; name a file.`);
  if (!opts.force) throw new BbError('BB_OUT_EXISTS', `${path} already exists: choose another ${what} or pass --force to overwrite it.`);
}

/**
 * checkOutPath, and the folder `path` names must already be there: a report
 * is written into a folder, never makes one, so a command that runs long
 * (a diff, a shadow run) can refuse the path before it starts.
 */
export function checkOutPathInFolder(path: string, opts: OutFileOptions = {}): void {
  checkOutPath(path, opts);
  let isFolder: boolean;
  try {
    isFolder = statSync(dirname(path)).isDirectory();
  } catch (err) {
    throw unwritable(path, opts.what ?? '--out', err, opts.unwritable);
  }
  if (!isFolder) throw unwritable(path, opts.what ?? '--out', Object.assign(new Error('not a folder'), { code: 'ENOTDIR' }), opts.unwritable);
}

/** BB_OUT_UNWRITABLE for a failure to create or open what `path` needs. */
function unwritable(path: string, what: string, err: unknown, bbCode: OutFileOptions['unwritable'] = 'BB_OUT_UNWRITABLE'): BbError {
  const code = reason(err);
  const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way of its folder' : code === 'ENOENT' ? 'its folder does not exist' : code;
  return new BbError(bbCode, `cannot write ${what} ${path} (${why}): choose another path.`);
}

/** Creates `folder` (and its parents); BB_OUT_UNWRITABLE (one sentence) when a file is in the way or it cannot be made. */
export function makeOutFolder(folder: string, what = '--out', mode?: number): void {
  try {
    makeDirsSync(folder, mode);
  } catch (err) {
    throw unwritable(folder, what, err);
  }
}

/**
 * Starts writing `path` atomically, without checkOutPath (the HAR writer
 * checked when the capture opened): write through handle, then commit. Fails
 * with the errno error as it came, for the caller to put in its own sentence.
 */
export async function openAtomic(path: string, mode = 0o600): Promise<OutFile> {
  const tmp = `${path}.${process.pid}-${serial++}.tmp`;
  const handle = await open(tmp, 'wx', mode);
  let done = false;
  return {
    handle,
    async commit() {
      done = true;
      try {
        await handle.sync();
        await handle.close();
        await rename(tmp, path);
      } catch (err) {
        await handle.close().catch(() => undefined);
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
    },
    async abort() {
      if (done) return;
      done = true;
      await handle.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
    },
  };
}

/** Writes `text` to `path` by this file's rules (checkOutPath, then atomically); every failure is one BbError sentence. */
export async function writeOutFile(path: string, text: string | Uint8Array, opts: OutFileOptions = {}): Promise<void> {
  const what = opts.what ?? '--out';
  checkOutPath(path, opts);
  let out: OutFile | undefined;
  try {
    out = await openAtomic(path, opts.mode);
    await out.handle.writeFile(text);
    await out.commit();
  } catch (err) {
    await out?.abort();
    throw unwritable(path, what, err, opts.unwritable);
  }
}
