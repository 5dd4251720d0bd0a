// One recording: opens the journal, listens to the proxy's facts, and on
// close finalizes `<out>` atomically. The I/O shell around recorder.ts
// (facts → records) and writer.ts (records → HAR).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { FactListener } from '../proxy/index.js';
import { now } from '../core/index.js';
import { JournalAppender, JOURNAL_VERSION, type HeaderRecord } from './journal.js';
import { Recorder } from './recorder.js';
import { Redactor, type RedactConfig } from './redact.js';
import type { SecretValues } from './redact-values.js';
import { loadRedactKey, loadRedactKeyFile, REDACT_KEY_FILE } from './redact-key.js';
import { currentOwner } from './journal-owner.js';
import { bbVersion } from './version.js';
import type { HarShadow } from './har.js';
import type { HarReplayOf, ShadowRole } from './har.js';
import { BodySeal } from './body-seal.js';
import { writeHarFromJournal, type WriteProgress } from './writer.js';
import { BbError, isBbError } from '../core/index.js';
import { DEFAULT_BODY_CAP, journalPaths, MAX_RECORDED_CAP } from './options.js';
import { checkOutPath, makeOutFolder } from './out-file.js';
import { LiveRecords, type LiveCapture, type LiveLimits } from './live.js';


/** How to record one proxy's traffic. */
export interface CaptureOptions {
  /** HAR path written at close; the journal is `${out}.journal`, bodies `${out}.bodies`. */
  out: string;
  /** Name of this side, e.g. "old". */
  label: string;
  /** Upstream origin ("http://127.0.0.1:3001") or "forward". */
  target: string;
  /** The proxy's own URL ("http://127.0.0.1:8080"). */
  listen: string;
  /** bb's home folder (the redaction key lives there; created 0700 if missing). */
  bbHome: string;
  /** Overwrite an existing `out`. */
  force?: boolean;
  /** Extra names to redact; false keeps every value (--no-redact). Default: the lists in docs/capture.md "What the proxy guarantees". */
  redact?: RedactConfig | false;
  /** Recorded bytes per body (and per WebSocket message); default 16 MiB. */
  bodyCap?: number;
  /** Recorded message bytes per WebSocket connection and direction; past it messages keep their size and a hash. Default 128 MiB. */
  wsBudget?: number;
  /** Recorded as log._bb.serverHome. */
  serverHome?: string;
  /** bb replay: recorded as log._bb.replayOf (replay-of.ts). */
  replayOf?: HarReplayOf;
  /** bb shadow: the request headers it sets on this target's copies (--header), recorded as log._bb.setHeaders. */
  setHeaders?: string[];
  /** bb shadow: which of its captures this is, recorded as log._bb.shadowRole. */
  shadowRole?: ShadowRole;
  /** Recording failures (disk full, folder removed): called and counted, never thrown into traffic. */
  onError?: (err: Error) => void;
  /** The `_bb.seq` counter to go on from (a rotating capture's segments share one: segments.ts). */
  seqs?: { n: number };
  /** A body's pieces written each at its own time before its bytes are gathered; default PIECES_TIMED (tests lower it). */
  piecesTimed?: number;
}

/** The secrets remembered by value so far, handed on by a rotating capture's segments (segments.ts) as they open. */
export interface SecretsCarried {
  /** The newest segment's: the next one starts knowing them (journaled as its own) and leaves its own here. */
  values?: SecretValues;
}

/** Counts while recording. */
export interface CaptureStats {
  /** Exchanges seen so far (each becomes an entry). */
  entries: number;
  /** WebSocket messages and error rows recorded. */
  webSocketMessages: number;
  /** Exchanges begun and not ended. */
  inFlight: number;
  /** Failed writes (and listener failures). */
  recordingErrors: number;
  /** Steps begun. */
  pages: number;
}

/** A recording in progress. */
export interface Capture {
  /** Attach with `bus.on(capture.listener)`. */
  readonly listener: FactListener;
  /** Starts a new HAR page; later entries get its pageref, WS messages `_bb.page`. */
  step(name: string): void;
  /** Live counts. */
  stats(): CaptureStats;
  /** The `_bb.seq` of an exchange under way (or of the refused packet just recorded), by proxy exchange id. */
  seqOf(exchangeId: number): number | undefined;
  /** `bb shadow`: writes `_bb.shadow` on an exchange still open (later tags merge); false when it has ended. */
  tag(exchangeId: number, shadow: HarShadow): boolean;
  /** The capture followed live (rows, entries, messages as recorded), made on first call with everything recorded so far; `limits`: what it keeps (live.ts LiveLimits). */
  live(limits?: LiveLimits): LiveCapture;
  /** Drops the recording: closes and removes the journal and bodies, writes no HAR (a start that failed). */
  discard(): void;
  /** Finalizes `<out>` (journal → `.tmp` → fsync → rename), removes journal and bodies; resolves to out. Idempotent. */
  close(onProgress?: (progress: WriteProgress) => void): Promise<string>;
  /** The HAR path. */
  readonly out: string;
}

/** Starts recording into `opts.out`; refuses to overwrite a HAR or to bury a leftover journal. */
export async function openCapture(opts: CaptureOptions): Promise<Capture> {
  return openCaptureNow(opts);
}

/** openCapture, synchronously: a rotating capture opens its next segment between two facts (segments.ts), handing on `secrets`. */
export function openCaptureNow(opts: CaptureOptions, secrets?: SecretsCarried): Capture {
  validate(opts);
  const out = resolve(opts.out);
  const paths = journalPaths(out);
  if (existsSync(paths.journal)) {
    throw new BbError('BB_JOURNAL_LEFTOVER', `a journal from an earlier capture is left at ${paths.journal}: run \`bb recover ${opts.out}\` to keep it (or remove it).`);
  }
  checkOutPath(opts.out, { force: opts.force });
  const redact = opts.redact ?? {};
  // Load (or create) the key now: a bad bb home should stop the capture before traffic, not at close.
  const keyFile = join(resolve(opts.bbHome), REDACT_KEY_FILE);
  const keyed = redact === false ? undefined : { key: loadRedactKey(opts.bbHome), config: redact };
  const redactor = keyed && new Redactor(keyed.key, keyed.config);
  makeOutFolder(dirname(out));

  let recordingErrors = 0;
  const onError = (err: Error) => {
    recordingErrors++;
    try {
      opts.onError?.(err);
    } catch {
      // A reporter that throws must not reach traffic.
    }
  };
  let journal: JournalAppender;
  try {
    journal = JournalAppender.create(paths.journal, paths.bodies, onError);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new BbError('BB_JOURNAL_LEFTOVER', `another capture is writing ${paths.journal}: give each capture its own --out.`);
    }
    throw new BbError('BB_CAPTURE_OPEN', `cannot create ${paths.journal}: ${(err as Error).message}.`);
  }
  const bodyCap = opts.bodyCap ?? DEFAULT_BODY_CAP;
  const header: HeaderRecord = {
    r: 'bb-journal',
    v: JOURNAL_VERSION,
    label: opts.label,
    target: opts.target,
    listen: opts.listen,
    startedDateTime: new Date(now()).toISOString(),
    bodyCap,
    redact: redact === false ? false : { keyFile, headers: redact.headers ?? [], query: redact.query ?? [], json: redact.json ?? [] },
    ...(redactor ? { seal: BodySeal.nonce() } : {}),
    ...(opts.serverHome !== undefined ? { serverHome: opts.serverHome } : {}),
    ...(opts.replayOf !== undefined ? { replayOf: opts.replayOf } : {}),
    ...(opts.setHeaders?.length ? { setHeaders: opts.setHeaders } : {}),
    ...(opts.shadowRole ? { shadowRole: opts.shadowRole } : {}),
    ...currentOwner(paths.journal),
    creator: { name: 'bb', version: bbVersion() },
  };
  journal.appendRecord(header);
  journal.flushNow();
  if (redactor && header.seal) journal.seal = redactor.bodySeal(header.seal);
  if (redactor) {
    // Each value redacted for the first time is journaled by its placeholder and length (redact-values.ts).
    const values = redactor.rememberValues((secret) => journal.appendRecord({ r: 'sec', ...secret }));
    if (secrets?.values) values.seed(secrets.values);
    if (secrets) secrets.values = values;
  }
  const recorder = new Recorder(journal, bodyCap, onError, redactor, opts.seqs, opts.wsBudget, opts.piecesTimed);

  let live: LiveRecords | undefined;
  const follow = (limits?: LiveLimits): LiveCapture => {
    if (live) return live;
    // Its own redactor: what the page builds must not teach the recorder's (whose values go to the journal).
    live = new LiveRecords(header, keyed && readingRedactor(keyed.key, keyed.config), paths, limits);
    // What is recorded so far comes from the file (whole lines once flushed), the rest from the recorder as it is written.
    const size = journal.attach(live);
    live.catchUp(readFileSync(paths.journal).subarray(0, size));
    return live;
  };

  let closing: Promise<string> | undefined;
  const close = async (onProgress?: (progress: WriteProgress) => void): Promise<string> => {
    recorder.stop();
    journal.close();
    try {
      await writeHarFromJournal({
        journalPath: paths.journal,
        bodiesPath: paths.bodies,
        out,
        complete: true,
        endedAt: now(),
        redactorFor: (header) => redactorFor(header),
        ...(onProgress ? { onProgress } : {}),
      });
    } catch (err) {
      if (isBbError(err)) throw err;
      throw new BbError('BB_CAPTURE_FINALIZE', `could not write ${out} (${(err as Error).message}); what was recorded stays in ${paths.journal}: fix the cause, then run \`bb recover ${out}\`.`);
    }
    // Journal first: a crash between the two leaves only bodies, which the next capture overwrites.
    rmSync(paths.journal, { force: true });
    rmSync(paths.bodies, { force: true });
    live?.close();
    return out;
  };

  return {
    out,
    listener: (fact) => recorder.record(fact),
    step: (name) => {
      if (!recorder.stopped) recorder.step(name, now());
    },
    stats: () => ({
      entries: recorder.counts.entries,
      webSocketMessages: recorder.counts.webSocketMessages,
      inFlight: recorder.inFlight,
      recordingErrors,
      pages: recorder.counts.pages,
    }),
    seqOf: (exchangeId) => recorder.startSeq(exchangeId),
    tag: (exchangeId, shadow) => recorder.tag(exchangeId, shadow, now()),
    live: follow,
    discard: () => {
      recorder.stop();
      journal.close();
      live?.close();
      rmSync(paths.journal, { force: true });
      rmSync(paths.bodies, { force: true });
    },
    close: (onProgress) => (closing ??= close(onProgress)),
  };
}

/** The redactor a journal header asks for (its key file, else the given bb home's key). */
export function redactorFor(header: HeaderRecord, bbHome?: string): Redactor | undefined {
  if (header.redact === false) return undefined;
  let key: Buffer;
  try {
    key = loadRedactKeyFile(header.redact.keyFile, false);
  } catch (err) {
    if (bbHome === undefined) {
      throw new BbError('BB_REDACT_KEY', `the redaction key ${header.redact.keyFile} this journal was recorded with is unreadable (${(err as Error).message}): restore it or set BB_HOME to the bb home that holds it.`);
    }
    key = loadRedactKey(bbHome);
  }
  return readingRedactor(key, header.redact);
}

/** A redactor for reading a journal: values redacted by value as its `sec` records and its own redactions teach it. */
function readingRedactor(key: Buffer, config: RedactConfig): Redactor {
  const r = new Redactor(key, config);
  r.rememberValues();
  return r;
}

function validate(opts: CaptureOptions): void {
  for (const name of ['out', 'label', 'target', 'listen', 'bbHome'] as const) {
    if (typeof opts[name] !== 'string' || opts[name] === '') {
      throw new BbError('BB_CAPTURE_OPTIONS', `openCapture needs ${name} as a non-empty string.`);
    }
  }
  if (opts.piecesTimed !== undefined && (!Number.isInteger(opts.piecesTimed) || opts.piecesTimed < 1)) {
    throw new BbError('BB_CAPTURE_OPTIONS', `piecesTimed must be a whole number from 1 on, got ${opts.piecesTimed}.`);
  }
  for (const name of ['bodyCap', 'wsBudget'] as const) {
    const n = opts[name];
    if (n !== undefined && (!Number.isInteger(n) || n < 0 || n > MAX_RECORDED_CAP)) {
      throw new BbError('BB_CAPTURE_OPTIONS', `${name} must be a whole number of bytes from 0 to ${MAX_RECORDED_CAP} (128 MiB: readers parse an entry of at most 480 MB), got ${n}.`);
    }
  }
}
