// Tails a running capture's journal (`<out>.journal`, format in journal.ts)
// for `bb frames --follow`: reads what is there, then polls for appended
// lines, and turns records into what the finished HAR will hold, with the
// same functions the writer uses (to-har.ts: URLs with their query redacted,
// WebSocket messages with text checked as UTF-8 and truncation noted), so
// following a capture shows what `bb frames` shows of it afterwards.
// Payloads are read from `<out>.bodies` through the writer's own reader
// (writer.ts entryContext: one read-ahead window, one running cipher). This
// file touches the disk.
//
// The capture writes body bytes before the journal line that points at them,
// so a whole line's payload is always readable. A line without its newline
// yet is kept until the rest arrives. The journal disappears when the capture
// stops cleanly (it becomes `<out>`): following then ends.
import { closeSync, openSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import type { HarWebSocketMessage } from './har.js';
import { parseJournalLine, type HeaderRecord, type JournalRecord, type StartRecord } from './journal.js';
import { unfoldRecord } from './journal-fold.js';
import { LineSplitter, type OnLine } from './journal-bytes.js';
import type { Redactor } from './redact.js';
import { buildWsMessage, entryUrl, type EntryContext } from './to-har.js';
import { entryContext } from './writer.js';

/** One followed event: a WebSocket message (or error row), or an HTTP request/response when asked. */
// `exchange` is the exchange's name, `#<exchange>`: the seq its request got (its `_bb.seq` in the HAR).
export type FollowedEvent =
  | { kind: 'ws'; connection: string; exchange: number; url: string; openedAt: number; message: HarWebSocketMessage }
  | { kind: 'request'; connection: string; exchange: number; seq: number; time: number; method: string; url: string }
  | { kind: 'response'; exchange: number; seq: number; time: number; method: string; url: string; status: number };

/** How to follow. */
export interface FollowOptions {
  journalPath: string;
  bodiesPath: string;
  /** Called for every event, in journal order. */
  onEvent: (event: FollowedEvent) => void;
  /** Also report HTTP requests and responses (for --timeline). */
  http?: boolean;
  /** Poll interval, ms (default 200). */
  pollMs?: number;
  /** Stops following. */
  signal?: AbortSignal;
  /** The redactor the journal's header asks for (values are redacted only when the HAR is written). */
  redactorFor?: (header: HeaderRecord) => Redactor | undefined;
}

/** Why following ended. */
export type FollowEnd = 'capture-ended' | 'aborted' | 'finished';

/** What is known of one exchange while following. */
interface Exchange {
  start: StartRecord;
  url: string;
  status?: number;
  openedAt: number;
}

/** Follows until the journal goes away (the capture stopped) or the signal aborts. */
export async function followJournal(opts: FollowOptions): Promise<FollowEnd> {
  const pollMs = opts.pollMs ?? 200;
  const exchanges = new Map<number, Exchange>();
  // What the journal's header says: the redactor, the bodies' reader, the proxy's own address (a request with no Host).
  let ctx: EntryContext | undefined;
  let bodiesFd: number | undefined;
  const handle = (line: string): void => {
    const rec = parseJournalLine(line);
    if (!rec) return;
    if (rec.r === 'bb-journal') return handleRecord(rec);
    for (const r of unfoldRecord(rec as JournalRecord)) handleRecord(r);
  };
  const handleRecord = (rec: HeaderRecord | JournalRecord): void => {
    switch (rec.r) {
      case 'bb-journal':
        try {
          bodiesFd ??= openSync(opts.bodiesPath, 'r');
        } catch {
          // No bodies file: payloads read back as lost, as the writer reads them.
        }
        ctx = entryContext(rec, opts.redactorFor?.(rec), bodiesFd);
        return;
      case 'start': {
        const url = entryUrl(rec, ctx?.fallbackOrigin ?? '', ctx?.redactor);
        exchanges.set(rec.x, { start: rec, url, openedAt: rec.ts / 1000 });
        if (opts.http) {
          opts.onEvent({ kind: 'request', connection: rec.c, exchange: rec.seq, seq: rec.seq, time: rec.ts / 1000, method: rec.method, url });
        }
        return;
      }
      case 'rs':
      case 'upg': {
        const ex = exchanges.get(rec.x);
        if (ex) ex.status = rec.st;
        return;
      }
      case 'done':
      case 'fail':
      case 'abort': {
        const ex = exchanges.get(rec.x);
        if (opts.http && ex) {
          const status = rec.r === 'fail' ? (rec.resp?.st ?? 0) : (ex.status ?? 0);
          opts.onEvent({ kind: 'response', exchange: ex.start.seq, seq: rec.seq, time: rec.ts / 1000, method: ex.start.method, url: ex.url, status });
        }
        if (rec.r !== 'done' || !ex?.start.upg) exchanges.delete(rec.x);
        return;
      }
      case 'wsm':
      case 'wse': {
        const ex = exchanges.get(rec.x);
        const message = buildWsMessage(rec, ctx ?? { readBody: () => Buffer.alloc(0) });
        opts.onEvent({
          kind: 'ws',
          connection: ex?.start.c ?? String(rec.x),
          exchange: ex?.start.seq ?? rec.x,
          url: ex?.url ?? '',
          openedAt: ex?.openedAt ?? rec.ts / 1000,
          message,
        });
        return;
      }
      case 'wsc':
        exchanges.delete(rec.x);
        return;
      case 'sec':
        ctx?.redactor?.knowSecret(rec);
        return;
      default:
        return;
    }
  };

  try {
    return await tailLines(opts.journalPath, handle, pollMs, opts.signal);
  } finally {
    if (bodiesFd !== undefined) closeSync(bodiesFd);
  }
}

/**
 * Reads a growing journal line by line: what is there, then what is appended
 * (polling every `pollMs`), until the file goes away (the capture stopped
 * cleanly) or the signal aborts. A line without its newline yet waits. Each
 * line comes with the byte offset it starts at and its length in bytes (so a
 * follower can read it again later instead of holding it: entry-follow.ts).
 */
export async function tailLines(
  path: string,
  onLine: OnLine,
  pollMs: number,
  signal?: AbortSignal,
  /** Read what the journal holds now, to its end, then stop ('finished'): its writer is done with it. */
  finish?: AbortSignal,
): Promise<FollowEnd> {
  let offset = 0;
  // A line without its newline yet waits for it (a growing journal's last line is still being written).
  const lines = new LineSplitter(false);
  let journal: FileHandle | undefined;
  // One read's bytes, read into again by the next (a long journal is read a chunk at a time).
  const chunk = Buffer.allocUnsafe(READ_CHUNK);
  // A poll's wait ends early on either signal.
  const wake = signal && finish ? AbortSignal.any([signal, finish]) : (signal ?? finish);
  try {
    for (;;) {
      if (signal?.aborted) return 'aborted';
      // Seen before the read: a finish that comes while the read runs gets one more look, so what was written
      // before it is read (a read begun earlier may not see it).
      const finishing = finish?.aborted === true;
      // While lines come, each poll is one read at the offset (an open journal stays readable when the
      // capture renames or removes it); the stat, which tells a journal gone, only when a read found nothing new.
      let bytesRead = 0;
      if (journal) ({ bytesRead } = await journal.read(chunk, 0, chunk.length, offset));
      if (bytesRead === 0) {
        let size: number | undefined;
        try {
          size = (await stat(path)).size;
        } catch {
          // Gone. The read above may have come just before the capture's last lines and the removal (a follower
          // starved between the two): the open journal still holds them, so one more read before ending.
          if (journal) ({ bytesRead } = await journal.read(chunk, 0, chunk.length, offset));
          if (bytesRead === 0) return 'capture-ended';
        }
        if (size !== undefined && size > offset) {
          try {
            journal ??= await open(path, 'r');
          } catch (err) {
            // Removed since the stat, before it was ever opened: the capture ended.
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'capture-ended';
            throw err;
          }
          ({ bytesRead } = await journal.read(chunk, 0, chunk.length, offset));
        }
      }
      if (bytesRead > 0) {
        offset += bytesRead;
        // The splitter keeps no reference to the chunk past this call (a cut line is copied), so the next read reuses it.
        await lines.feed(chunk.subarray(0, bytesRead), onLine);
        continue;
      }
      if (finishing) return 'finished';
      if (finish?.aborted) continue;
      await sleep(pollMs, wake);
    }
  } finally {
    await journal?.close().catch(() => {});
  }
}

/** Bytes one read of a followed journal takes at most. */
const READ_CHUNK = 256 * 1024;

/** Waits `ms`, or less when the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
