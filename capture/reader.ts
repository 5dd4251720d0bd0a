// Reads a capture file: any HAR 1.2 (bb's own, Chrome, Firefox, Safari,
// Charles, Insomnia, mitmproxy, Playwright, HTTP Toolkit).
//
// Two forms: `readCapture` gives the whole Har; `streamCapture` gives the log
// header and an async iterator of entries, so callers that only need one entry
// at a time (the differ on huge captures) can stay bounded. Both check shapes
// (see reader-validate.ts), tolerate a UTF-8 BOM, and refuse what cannot be
// compared with a CaptureReadError (core's BbError naming the file):
//   BB_CAPTURE_UNREADABLE  the file cannot be read
//   BB_CAPTURE_INVALID     not JSON, not a HAR, or a value of the wrong type
//   BB_CAPTURE_INCOMPLETE  log._bb.complete === false (recovered after a crash)
//   BB_CAPTURE_EMPTY       no entries: an empty comparison is never a match
// WebSocket and SSE message times come back in epoch seconds whatever the
// producer wrote (Playwright writes milliseconds).
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { BbError, type BbErrorOptions } from '../core/index.js';
import { journalPaths } from './options.js';
import type { Har, HarEntry } from './har.js';
import { HarShapeError, validateEntry, validateHar, validateLogHeader, type HarLogHeader } from './reader-validate.js';
import { EntryTooLargeError, indexCaptureFile, ONE_PIECE_LIMIT, type IndexedCapture } from './reader-index.js';

export type { IndexedCapture } from './reader-index.js';

export { toEpochSeconds, type HarLogHeader } from './reader-validate.js';

/** Options for reading a capture. */
export interface ReadCaptureOptions {
  /** Accept a capture recovered after a crash (`log._bb.complete: false`). */
  allowIncomplete?: boolean;
  /** Accept a capture of no entries (a `bb shadow` mirror's segment in which nothing was mirrored). */
  allowEmpty?: boolean;
}

/** Why a capture cannot be used. */
export type CaptureErrorCode = 'BB_CAPTURE_INVALID' | 'BB_CAPTURE_UNREADABLE' | 'BB_CAPTURE_INCOMPLETE' | 'BB_CAPTURE_EMPTY';

/** A capture that cannot be compared: one sentence naming the file and what to do. */
export class CaptureReadError extends BbError<CaptureErrorCode> {
  /** The file concerned. */
  readonly file: string;
  constructor(code: CaptureErrorCode, message: string, options: BbErrorOptions & { file: string }) {
    super(code, message.replace(/\s*\n\s*/g, ' '), options);
    this.name = 'CaptureReadError';
    this.file = options.file;
  }
}

/** A capture opened for entry-by-entry reading. */
export interface CaptureStream {
  /** The file read. */
  readonly path: string;
  /** Everything in `log` but the entries (pages, creator, `_bb`...). */
  readonly header: HarLogHeader;
  /** How many entries the file holds. */
  readonly entryCount: number;
  /** Yields each checked entry in file order; may be iterated more than once. */
  entries(): AsyncIterable<HarEntry>;
}

// Past ONE_PIECE_LIMIT, one JSON string would near V8's ~512 Mi-character
// limit. Bigger files are read entry by entry (indexCapture).
const WHOLE_FILE_LIMIT = ONE_PIECE_LIMIT;

/** Reads and checks a whole capture file. */
export async function readCapture(path: string, opts: ReadCaptureOptions = {}): Promise<Har> {
  return checkCapture(path, await parseFile(path), opts);
}

/** A capture already parsed (or built in memory), checked as readCapture checks a file; `path` names it in errors. Fills missing optional fields in place. */
export function checkCapture(path: string, doc: unknown, opts: ReadCaptureOptions = {}): Har {
  let har: Har;
  try {
    har = validateHar(doc);
  } catch (err) {
    throw shapeError(path, err);
  }
  checkUsable(path, har.log, har.log.entries.length, opts);
  return har;
}

/** Opens a capture for entry-by-entry reading (same checks as readCapture). */
export async function streamCapture(path: string, opts: ReadCaptureOptions = {}): Promise<CaptureStream> {
  // Past one string's worth, read by entry offsets (the file stays open for re-iteration).
  if (((await stat(path).catch(() => undefined))?.size ?? 0) > WHOLE_FILE_LIMIT) {
    const cap = await indexCapture(path, opts);
    return { path, header: cap.header, entryCount: cap.entryCount, entries: () => cap.entries() };
  }
  const doc = await parseFile(path);
  let header: HarLogHeader;
  let rawEntries: unknown[];
  try {
    const root = doc as { log?: Record<string, unknown> };
    if (typeof root !== 'object' || root === null || typeof root.log !== 'object' || root.log === null || Array.isArray(root.log)) {
      throw new HarShapeError('log', 'an object', root?.log);
    }
    if (!Array.isArray(root.log.entries)) throw new HarShapeError('log.entries', 'an array', root.log.entries);
    header = validateLogHeader(root.log);
    rawEntries = root.log.entries;
  } catch (err) {
    throw shapeError(path, err);
  }
  checkUsable(path, header, rawEntries.length, opts);
  return {
    path,
    header,
    entryCount: rawEntries.length,
    async *entries() {
      for (let i = 0; i < rawEntries.length; i++) {
        try {
          yield validateEntry(rawEntries[i], `log.entries[${i}]`);
        } catch (err) {
          throw shapeError(path, err);
        }
      }
    },
  };
}

/**
 * Opens a capture of any size by entry offsets (reader-index.ts): same checks
 * and errors as readCapture; entries can be re-read in any order; close() it.
 */
export async function indexCapture(path: string, opts: ReadCaptureOptions = {}): Promise<IndexedCapture> {
  let cap: IndexedCapture;
  try {
    cap = await indexCaptureFile(path);
  } catch (err) {
    if (err instanceof HarShapeError) throw shapeError(path, err);
    if (err instanceof SyntaxError) throw new CaptureReadError('BB_CAPTURE_INVALID', `${path} is not valid JSON (${err.message}): the file is truncated or not a HAR; record or export it again.`, { file: path });
    const e = err as NodeJS.ErrnoException;
    throw unreadable(path, e);
  }
  try {
    checkUsable(path, cap.header, cap.entryCount, opts);
  } catch (err) {
    await cap.close();
    throw err;
  }
  const readEntry = async (i: number): Promise<HarEntry> => {
    try {
      return await cap.readEntry(i);
    } catch (err) {
      throw shapeError(path, err);
    }
  };
  return {
    ...cap,
    readEntry,
    async *entries() {
      for (let i = 0; i < cap.entryCount; i++) yield await readEntry(i);
    },
  };
}

/** The refusal for a file that cannot be opened; a missing HAR beside a journal is a capture not written yet. */
function unreadable(path: string, e: NodeJS.ErrnoException): CaptureReadError {
  if (e.code === 'ENOENT' && existsSync(journalPaths(path).journal)) {
    return new CaptureReadError('BB_CAPTURE_UNREADABLE', `${path} is not written yet (${journalPaths(path).journal} is there): stop the capture with Ctrl-C, or if it was killed run bb recover ${path}.`, { file: path });
  }
  const why = e.code === 'ENOENT' ? 'does not exist' : e.code === 'EACCES' ? 'is not readable (permission denied)' : e.code === 'EISDIR' ? 'is a directory, not a HAR file' : `cannot be read (${e.code ?? e.message})`;
  return new CaptureReadError('BB_CAPTURE_UNREADABLE', `${path} ${why}: check the path.`, { file: path });
}

async function parseFile(path: string): Promise<unknown> {
  let text: string;
  try {
    const info = await stat(path);
    if (info.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (info.size > WHOLE_FILE_LIMIT) {
      throw new CaptureReadError('BB_CAPTURE_UNREADABLE', `${path} is ${Math.round(info.size / 1048576)} MB, past what this reader parses in one piece (${WHOLE_FILE_LIMIT / 1048576} MB); split the capture or use a build with streamed reading.`, { file: path });
    }
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof CaptureReadError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw unreadable(path, e);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') {
    throw new CaptureReadError('BB_CAPTURE_INVALID', `${path} is empty, not a HAR file: record or export it again.`, { file: path });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const reason = (err as Error).message;
    throw new CaptureReadError('BB_CAPTURE_INVALID', `${path} is not valid JSON (${reason}): the file is truncated or not a HAR; record or export it again.`, { file: path });
  }
}

function shapeError(path: string, err: unknown): Error {
  if (err instanceof EntryTooLargeError) {
    return new CaptureReadError('BB_CAPTURE_UNREADABLE', `${path}: ${err.message}, past what bb parses as one entry (${ONE_PIECE_LIMIT / 1048576} MB: a WebSocket conversation of that much message data): bb cannot read it; remove that entry from the file to read the rest.`, { file: path });
  }
  if (err instanceof HarShapeError) {
    const notHar = err.path === 'log' || err.path === '(top level)' || err.path === 'log.entries';
    return new CaptureReadError('BB_CAPTURE_INVALID', notHar
      ? `${path} is not a HAR file: ${err.message}; give a HAR 1.2 export.`
      : `${path} is not a valid HAR: ${err.message}; fix or re-export the file.`, { file: path });
  }
  return err as Error;
}

function checkUsable(path: string, header: HarLogHeader, entryCount: number, opts: ReadCaptureOptions): void {
  if (header._bb?.complete === false && !opts.allowIncomplete) {
    throw new CaptureReadError('BB_CAPTURE_INCOMPLETE', `${path} is an incomplete capture (recovered after a crash): pass --allow-incomplete to compare it anyway.`, { file: path });
  }
  if (entryCount === 0 && !opts.allowEmpty) {
    throw new CaptureReadError('BB_CAPTURE_EMPTY', `${path} holds no entries: there is nothing to compare or show; check that traffic went through the proxy.`, { file: path });
  }
}
