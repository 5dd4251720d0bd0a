// Journal + bodies → HAR, streamed: keeps only the exchanges still open while
// it replays the journal, writes each entry when its end record comes (so
// entries are in completion order; HAR readers sort by startedDateTime), reads
// bodies back from `.bodies` by offset, and writes pages, counts and log._bb
// after the entries. A WebSocket conversation keeps its first messages'
// records and the journal byte ranges of the rest (entry-assembly.ts, as a
// live follower does), read back when its entry is written, so a capture
// closed with many long conversations open holds one conversation's messages
// at a time. Writes a temporary file, fsyncs, then renames (out-file.ts, the
// rule of every file bb writes): a reader never sees half a file.
import { open, type FileHandle } from 'node:fs/promises';
import { closeSync, openSync } from 'node:fs';
import { isShadowRole, type BbLogExt, type HarPage } from './har.js';
import { unfoldRecord } from './journal-fold.js';
import { JOURNAL_VERSION, parseJournalLine, type HeaderRecord, type JournalRecord } from './journal.js';
import { buildEntry, buildWsMessage, type EntryContext, type ExchangeRecords } from './to-har.js';
import { EntryAssembler } from './entry-assembly.js';
import { readLineRanges, scanJournal } from './journal-bytes.js';
import type { Redactor } from './redact.js';
import { BbError } from '../core/index.js';
import { openAtomic } from './out-file.js';
import { SliceReader } from './body-read.js';
import { DECODED_BODY_CAP } from './body.js';

/** How to turn one journal into a HAR. */
export interface WriteHarOptions {
  /** `<out>.journal`. */
  journalPath: string;
  /** `<out>.bodies`. */
  bodiesPath: string;
  /** The HAR to write (via a temporary file beside it); whether it may be replaced was settled when the capture opened. */
  out: string;
  /** false when recovering after a crash. */
  complete: boolean;
  /** Makes the redactor from the journal's header; undefined result = keep values. */
  redactorFor: (header: HeaderRecord) => Redactor | undefined;
  /** endedDateTime; defaults to the last record's time. */
  endedAt?: number;
  /** Told how far the writing is, every few hundred entries and at the end (a long finalize or recover shows progress). */
  onProgress?: (progress: WriteProgress) => void;
}

/** How far writing a HAR is. */
export interface WriteProgress {
  /** Entries written so far. */
  entries: number;
  /** Journal bytes read so far. */
  journalBytesRead: number;
  /** The journal's size when writing began. */
  journalBytes: number;
}

/** Entries between two progress reports. */
const PROGRESS_EVERY = 256;

/** What was written. */
export interface WriteHarResult {
  /** Entries in the HAR. */
  entries: number;
  /** WebSocket messages (and error rows) in the HAR. */
  webSocketMessages: number;
  /** Journal lines that did not parse (a torn last write). */
  dropped: number;
  /** Exchanges that had not ended, written as in flight. */
  open: number;
  /** WebSocket records held as objects at most at once (open conversations' first messages and the entry being written). */
  heldAtMost: number;
}

/** Streams a journal into a HAR file atomically. */
export async function writeHarFromJournal(opts: WriteHarOptions): Promise<WriteHarResult> {
  const target = await openAtomic(opts.out, 0o600);
  const file = target.handle;
  let bodiesFd: number | undefined;
  try {
    try {
      bodiesFd = openSync(opts.bodiesPath, 'r');
    } catch {
      // No bodies file: every body reads back as lost, and the entries say so.
    }
    const out = new BufferedOut(file);
    const result = await replay(opts, out, bodiesFd);
    await out.flush();
    await target.commit();
    return result;
  } catch (err) {
    await target.abort();
    throw err;
  } finally {
    if (bodiesFd !== undefined) closeSync(bodiesFd);
  }
}

async function replay(opts: WriteHarOptions, out: BufferedOut, bodiesFd: number | undefined): Promise<WriteHarResult> {
  const journal = await open(opts.journalPath, 'r');
  try {
    return await replayJournal(opts, journal, out, bodiesFd);
  } finally {
    await journal.close();
  }
}

async function replayJournal(opts: WriteHarOptions, journal: FileHandle, out: BufferedOut, bodiesFd: number | undefined): Promise<WriteHarResult> {
  const journalBytes = opts.onProgress ? (await journal.stat()).size : 0;
  let journalBytesRead = 0;
  const progress = (): void => opts.onProgress?.({ entries: result.entries, journalBytesRead, journalBytes });
  let header: HeaderRecord | undefined;
  let ctx: EntryContext | undefined;
  // Records past an open conversation's first ones are read back from the journal by their ranges; its messages past
  // the list are folded as they come (with the header read, ctx is there before any message).
  const assembler = new EntryAssembler((lines) => readLineRanges(journal.fd, lines), false, (slice) => ctx!.readBody(slice));
  const pages: HarPage[] = [];
  const result: WriteHarResult = { entries: 0, webSocketMessages: 0, dropped: 0, open: 0, heldAtMost: 0 };
  let lastTs = 0;
  let first = true;

  const writeEntry = (ex: ExchangeRecords): Promise<void> | undefined => {
    result.heldAtMost = Math.max(result.heldAtMost, assembler.heldWsRecords() + ex.ws.length);
    if (ex.upgrade && ex.ws.length > 0) return writeConversation(ex);
    const entry = buildEntry(ex, ctx!);
    out.write((first ? '\n' : ',\n') + JSON.stringify(entry));
    entryWritten(0);
    return undefined;
  };
  // A WebSocket entry is written a message at a time: a long conversation's messages together can be longer than
  // one string may be (9,000 binary messages of 64 KiB are 786M characters of base64; the HAR was not written at
  // all), and none of them is held past its write.
  const writeConversation = async (ex: ExchangeRecords): Promise<void> => {
    const text = JSON.stringify(buildEntry({ ...ex, ws: [] }, ctx!));
    const at = text.indexOf(NO_MESSAGES) + NO_MESSAGES.length - 1;
    out.write((first ? '\n' : ',\n') + text.slice(0, at));
    for (let i = 0; i < ex.ws.length; i++) {
      out.write((i > 0 ? ',' : '') + JSON.stringify(buildWsMessage(ex.ws[i]!, ctx!)));
      await out.drain();
    }
    out.write(text.slice(at));
    entryWritten(ex.ws.length);
  };
  const entryWritten = (messages: number) => {
    result.webSocketMessages += messages;
    first = false;
    result.entries++;
    if (result.entries % PROGRESS_EVERY === 0) progress();
  };

  // Returns a promise only when a batch of output is to be written first (most lines end no entry).
  const onLine = (line: string, at: number, bytes: number): Promise<void> | undefined => {
    const rec = parseJournalLine(line);
    if (!rec) {
      if (line !== '') result.dropped++;
      return undefined;
    }
    if (!header) {
      if (rec.r !== 'bb-journal') throw journalError(opts.journalPath, 'does not start with a bb journal header');
      header = rec as HeaderRecord;
      if (header.v > JOURNAL_VERSION) throw journalError(opts.journalPath, `is format ${header.v}, newer than this bb reads (${JOURNAL_VERSION})`);
      ctx = entryContext(header, opts.redactorFor(header), bodiesFd);
      // A damaged header must not make the HAR invalid JSON ("creator":undefined).
      const c = header.creator as { name?: unknown; version?: unknown } | undefined;
      const creator = c && typeof c.name === 'string' && typeof c.version === 'string' ? { name: c.name, version: c.version } : { name: 'bb', version: 'unknown' };
      out.write(`{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"entries":[`);
      return undefined;
    }
    // A folded line's records (journal-fold.ts) are HTTP ones, never read back: only a line of one record gives its place.
    const records = unfoldRecord(rec as JournalRecord);
    return feed(records, 0, records.length > 1 ? -1 : at, bytes);
  };
  // The records of one line from the i-th on; resumed after an entry whose writing waits for its output.
  const feed = (records: JournalRecord[], i: number, at: number, bytes: number): Promise<void> | undefined => {
    for (; i < records.length; i++) {
      const r = records[i]!;
      // Secrets by value are known from their record on: the entries that end after it hide them.
      if (r.r === 'sec') {
        ctx?.redactor?.knowSecret(r);
        continue;
      }
      if ('ts' in r && typeof r.ts === 'number' && r.ts > lastTs) lastTs = r.ts;
      if (r.r === 'rsts' && typeof r.te === 'number' && r.te > lastTs) lastTs = r.te;
      const done = assembler.feed(r, at, bytes);
      result.heldAtMost = Math.max(result.heldAtMost, assembler.heldWsRecords());
      if (done?.kind === 'page') {
        pages.push({ startedDateTime: new Date(done.ts).toISOString(), id: done.id, title: done.title, pageTimings: {} });
      } else if (done?.kind === 'entry') {
        const writing = writeEntry(done.exchange);
        if (writing) return writing.then(() => feed(records, i + 1, at, bytes));
      }
    }
    return out.drain();
  };
  await scanJournal(journal, onLine, (n) => (journalBytesRead = n));
  // Lines that are no journal record (result.dropped) mean another file, not an empty journal.
  if (!header) throw journalError(opts.journalPath, result.dropped ? 'does not start with a bb journal header' : 'is empty (no header record)');
  // What never ended goes in too, oldest first: a recovered capture keeps everything it saw.
  for (const ex of assembler.unfinished()) {
    await writeEntry(ex);
    result.open++;
    await out.drain();
  }

  const startedMs = Date.parse(header.startedDateTime);
  const bb: BbLogExt = {
    format: 1,
    label: header.label,
    target: header.target,
    listen: header.listen,
    startedDateTime: header.startedDateTime,
    endedDateTime: new Date(opts.endedAt ?? Math.max(lastTs, startedMs)).toISOString(),
    complete: opts.complete,
    counts: { entries: result.entries, webSocketMessages: result.webSocketMessages },
    redacted: header.redact !== false,
    ...(header.serverHome !== undefined ? { serverHome: header.serverHome } : {}),
    ...(header.replayOf !== undefined ? { replayOf: header.replayOf } : {}),
    ...(Array.isArray(header.setHeaders) ? { setHeaders: header.setHeaders.filter((n): n is string => typeof n === 'string') } : {}),
    ...(isShadowRole(header.shadowRole) ? { shadowRole: header.shadowRole } : {}),
    ...(opts.complete ? {} : { recovered: { droppedRecords: result.dropped, openExchanges: result.open } }),
  };
  progress();
  out.write(`${first ? '' : '\n'}],"pages":${JSON.stringify(pages)},"_bb":${JSON.stringify(bb)}}}\n`);
  return result;
}

/** What building entries of a journal needs: its bodies read back from `.bodies` (unsealed), its origin, its redactor. */
export function entryContext(header: HeaderRecord, redactor: Redactor | undefined, bodiesFd: number | undefined): EntryContext {
  const seal = header.seal !== undefined ? redactor?.bodySeal(header.seal) : undefined;
  // Slices mostly follow each other in the file: one running cipher unseals a run of them (applyInOrder).
  const bodies = new SliceReader(bodiesFd, seal && ((bytes, offset) => seal.applyInOrder(bytes, offset)));
  return {
    readBody: (slice) => bodies.read(slice),
    // A capture recording bodies past 64 MiB decodes them as far too.
    maxDecoded: Math.max(DECODED_BODY_CAP, typeof header.bodyCap === 'number' ? header.bodyCap : 0),
    fallbackOrigin: header.listen,
    ...(redactor ? { redactor } : {}),
  };
}

/** What a WebSocket entry built without its messages holds in their place (the one key of that name: any other is inside a string, its quotes escaped). */
const NO_MESSAGES = '"_webSocketMessages":[]';

function journalError(path: string, what: string): BbError {
  return new BbError('BB_JOURNAL_INVALID', `${path} ${what}: it is not a journal this bb can finalize.`);
}

/** Collects small writes into ~1 MiB writes. */
class BufferedOut {
  private parts: string[] = [];
  private size = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly file: FileHandle) {}

  write(s: string): void {
    this.parts.push(s);
    this.size += s.length;
  }

  /** Writes out once ~1 MiB is collected (undefined: nothing to wait for); awaiting it keeps memory bounded by one batch. */
  drain(): Promise<void> | undefined {
    return this.size >= 1 << 20 ? this.flush() : undefined;
  }

  /** Writes out everything collected, in order. */
  flush(): Promise<void> {
    if (this.parts.length > 0) {
      const chunk = this.parts.join('');
      this.parts = [];
      this.size = 0;
      this.pending = this.pending.then(async () => {
        // One write call may write less (disk full, file-size limit); the next one then fails.
        // Without the loop a short HAR would be renamed into place as if whole.
        const buf = Buffer.from(chunk, 'utf8');
        let done = 0;
        while (done < buf.length) {
          const { bytesWritten } = await this.file.write(buf, done, buf.length - done);
          if (bytesWritten <= 0) throw Object.assign(new Error('no space left: a write wrote nothing'), { code: 'ENOSPC' });
          done += bytesWritten;
        }
      });
    }
    return this.pending;
  }
}
