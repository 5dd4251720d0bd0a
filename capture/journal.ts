// The capture journal: what bb writes while it records, before any HAR exists.
//
// Two files sit beside the HAR-to-be `<out>`:
//   `<out>.journal`  versioned NDJSON, one small record per line (no bodies);
//   `<out>.bodies`   raw body / message bytes, appended as they cross,
//                    referenced from the journal as (o = offset, n = length).
// No base64 or JSON escaping of body bytes happens on the hot path.
//
// Record format, version 1 to 5 (every record is a JSON object; `r` says which;
// `x` is the proxy's exchange id; `ts` epoch ms as a float; `seq` comes from
// one counter per capture shared by exchanges and WebSocket messages):
//
//   {"r":"bb-journal","v":1,"label","target","listen","startedDateTime","bodyCap",
//    "redact":false|{"keyFile","headers":[],"query":[],"json":[]},"seal"?,"serverHome"?,"replayOf"?,"setHeaders"?,"pid"?,"host"?,"journal"?,"creator":{name,version}}
//                                        first line, always. Version 2, with redaction on: heads, targets
//                                        and trailers are already redacted here, and `.bodies` is sealed
//                                        (body-seal.ts; seal = the capture's nonce): no secret sits in
//                                        clear in either file, even after a kill -9
//   {"r":"page","id","title","ts"}       a step began (capture.step)
//   {"r":"start","x","seq","c","ts","scheme","method","target","v","h","up","upg","page"?,"sid"?,"push"?}
//                                        request head (c = connection id, h = raw headers flat,
//                                        v = HTTP version, up = upstream origin, upg = upgrade asked;
//                                        h2: sid = stream id, push = the stream whose PUSH_PROMISE made it)
//   {"r":"qb","x","ts","o"?,"n","w"}     request body chunk: w bytes crossed, n of them recorded at o
//                                        (n < w past the body cap; o absent when n = 0)
//   {"r":"qe","x","ts","tr"}             request ended (tr = raw trailers)
//   {"r":"rest","x","ts","d","h"}        a body went past the cap (d = q request, r response): h = the
//                                        hash of its bytes past it (rest-hash.ts), written when it ended
//   {"r":"rs","x","ts","st","sm","v","h"} response head (status, reason, version, raw headers)
//   {"r":"rb","x","ts","o"?,"n","w"}     response body chunk (still content-encoded)
//   {"r":"done","x","ts","seq","tr"}     exchange completed           } end records: written with a
//   {"r":"fail","x","ts","seq","err","resp"?}  upstream failed; resp =  } synchronous write call before
//                                        bb's own response {st,sm,h,o?,n,w}  the proxy sends the last byte
//   {"r":"abort","x","ts","seq","by","phase","err"?,"rst"?}  a side hung up (h2: rst = RST_STREAM code name) }
//   {"r":"cerr","x","c","ts","seq","err","raw"?,"resp"?,"page"?,"host"?,"by"?}  bytes that never became a request
//                                    (host: the CONNECT host:port of a TLS handshake the client refused;
//                                     by "upstream": an h2 connection error of the upstream's)
//                                        (raw = {o?,n,w} of the refused packet)
//   {"r":"rsts","x","c","ts","te","seq","scheme","method","target","v","h","up","sid","n","ids","rst","page"?}
//                                        h2: n streams of a flooding connection reset before any response,
//                                        one record for all (te = when the last was reset; the head is the
//                                        first stream's, sid its id; ids = [first, last] id ranges, two apart;
//                                        rst = [{by, code, n}]): an exchange of one record, like cerr
//   {"r":"inf","x","ts","st","sm","v","h","more"?}  an informational (1xx) response head before the final one
//                                        (the first 16 of an exchange; "more": a 17th came, and maybe others)
//   {"r":"upg","x","ts","st","sm","v","h"}  101 Switching Protocols
//   {"r":"wsm","x","ts","seq","d","op","o"?,"n","w","f","z","cc"?,"cr"?,"h"?,"page"?}
//                                        WebSocket message: d = send|receive, op = opcode, f = frames,
//                                        z = compressed on the wire, cc/cr = close code/reason,
//                                        h = the hash of its payload past the cap (rest-hash.ts)
//   {"r":"wse","x","ts","seq","d","code","msg","page"?}  a frame that did not parse
//   {"r":"wsc","x","ts","seq","code"?,"reason"?,"by"}    upgraded connection ended (end record)
//   {"r":"gm","x","ts","seq","d"}        a gRPC message's last byte crossed (d = send|receive): the k-th
//                                        of a direction is the k-th message split from that body
//   {"r":"sec","p","n","e"?}             version 5: a value the recorder redacted as a secret, the first time
//                                        (or again, once SECRETS_KEPT / 2 newer ones came): p = its placeholder,
//                                        n = its length, e = its percent-encoded form's length when another.
//                                        Never the value: readers find it again by length and keyed hash
//                                        wherever it is reused under another name (redact-values.ts)
//
// Version 3 folds an exchange's records of one loop turn into one line: a
// start may carry "qb", "qe", "tr" (its request's chunks and end), a response
// start "rb", "done", "seq", "tr" (its chunks and done); journal-fold.ts says
// how, and readers unfold such a line into the records above (unfoldRecord).
// Version 4: a start may also carry "tag" ({ts, shadow}: the `bb shadow` tag
// given while the start was held, unfolded right after the start).
// Version 5: "sec" records (redaction by value). An older bb would write a
// HAR without them, a secret reused under another name left in clear where
// only its value tells it: it refuses the journal, as any newer format.
//
// Readers must ignore unknown record kinds and unknown fields (later versions
// add, never change). A torn last line (the process died mid-write) does not
// parse and is dropped.
import type { HarShadow } from './har.js';
import type { HarReplayOf, ShadowRole } from './har.js';
import { closeSync, fstatSync, openSync, rmSync, writeSync, writevSync, fchmodSync } from 'node:fs';
import type { FailureInfo, RawHeaders } from '../proxy/index.js';
import type { RedactConfig } from './redact.js';
import type { SecretFields } from './redact-values.js';
import type { BodySeal } from './body-seal.js';
import { LineBuffer } from './line-buffer.js';

// Buffers per writev call (Linux's IOV_MAX).
const IOV_MAX = 1024;

/** The journal format version this code writes. */
export const JOURNAL_VERSION = 5;

/** Where recorded bytes sit in `.bodies`. */
export interface BodySlice {
  /** Offset in `.bodies`; absent when nothing was recorded. */
  o?: number;
  /** Bytes recorded. */
  n: number;
  /** Bytes that crossed the wire (≥ n). */
  w: number;
}

/** A response bb itself wrote, with its body in `.bodies`. */
export interface SyntheticRef extends BodySlice {
  st: number;
  sm: string;
  h: RawHeaders;
}

/** The first line of every journal. */
export interface HeaderRecord {
  r: 'bb-journal';
  v: number;
  label: string;
  target: string;
  listen: string;
  startedDateTime: string;
  bodyCap: number;
  /** false = recorded with --no-redact; else the key file and extra names. */
  redact: false | (RedactConfig & { keyFile: string });
  /** The nonce `.bodies` is sealed with (version 2, redaction on); absent = bodies in clear. */
  seal?: string;
  serverHome?: string;
  /** bb replay: the capture replayed and the entries not sent (log._bb.replayOf). */
  replayOf?: HarReplayOf;
  /** bb shadow: request headers bb sets on this target's copies (log._bb.setHeaders). */
  setHeaders?: string[];
  /** bb shadow: which of its captures this is (log._bb.shadowRole). */
  shadowRole?: ShadowRole;
  /** The capture's process and machine (journal-owner.ts): bb recover and a second capture refuse a journal still being written. */
  pid?: number;
  host?: string;
  journal?: string;
  creator: { name: string; version: string };
}

export interface PageRecord { r: 'page'; id: string; title: string; ts: number }
export interface StartRecord {
  r: 'start'; x: number; seq: number; c: string; ts: number; scheme: string; method: string;
  target: string; v: string; h: RawHeaders; up: string; upg: boolean; page?: string;
  /** HTTP/2 stream id; parent stream of a pushed one. */
  sid?: number; push?: number;
}
export interface BodyRecord extends BodySlice { r: 'qb' | 'rb'; x: number; ts: number }
export interface RequestEndRecord { r: 'qe'; x: number; ts: number; tr: RawHeaders }
/** The hash of a body's bytes past the cap (d: q request, r response), as `_bb.restHash` records it. */
export interface RestHashRecord { r: 'rest'; x: number; ts: number; d: 'q' | 'r'; h: string }
export interface ResponseStartRecord { r: 'rs'; x: number; ts: number; st: number; sm: string; v: string; h: RawHeaders }
export interface DoneRecord { r: 'done'; x: number; ts: number; seq: number; tr: RawHeaders }
export interface FailRecord { r: 'fail'; x: number; ts: number; seq: number; err: FailureInfo; resp?: SyntheticRef }
export interface AbortRecord {
  r: 'abort'; x: number; ts: number; seq: number; by: 'client' | 'upstream'; phase: string; err?: FailureInfo;
  /** HTTP/2: the RST_STREAM error code's name. */
  rst?: string;
}
export interface ClientErrorRecord {
  r: 'cerr'; x: number; c: string; ts: number; seq: number; err: FailureInfo; raw?: BodySlice; resp?: SyntheticRef; page?: string; host?: string;
  /** 'upstream' when the refused bytes came from the upstream (h2 connection errors). */
  by?: 'upstream';
}
/** h2: streams of a flooding connection reset before any response, summed (proxy's StreamsReset). */
export interface ResetBurstRecord {
  r: 'rsts'; x: number; c: string; ts: number; seq: number; scheme: string; method: string; target: string; v: string; h: RawHeaders; up: string;
  /** When the last stream was reset. */
  te: number;
  /** The first stream's id (the head is its). */
  sid: number;
  /** How many streams. */
  n: number;
  /** Their ids as [first, last] ranges of ids two apart. */
  ids: Array<[number, number]>;
  /** How many each side reset with each code, most first. */
  rst: Array<{ by: 'client' | 'upstream'; code: string; n: number }>;
  page?: string;
}
export interface UpgradeRecord { r: 'upg'; x: number; ts: number; st: number; sm: string; v: string; h: RawHeaders }
/** An informational (1xx) response head (100 Continue, 103 Early Hints) before the final one; `more`: past the kept ones, more came (not recorded). */
export interface InformationalRecord { r: 'inf'; x: number; ts: number; st: number; sm: string; v: string; h: RawHeaders; more?: true }
export interface WsMessageRecord extends BodySlice {
  r: 'wsm'; x: number; ts: number; seq: number; d: 'send' | 'receive'; op: number; f: number; z: boolean;
  cc?: number; cr?: string; page?: string;
  /** The hash of the payload past the cap, when `n < w` (rest-hash.ts). */
  h?: string;
}
export interface WsErrorRecord {
  r: 'wse'; x: number; ts: number; seq: number; d: 'send' | 'receive'; code: string; msg: string; page?: string;
}
export interface WsCloseRecord {
  r: 'wsc'; x: number; ts: number; seq: number; code?: number; reason?: string; by: 'client' | 'server' | 'none';
}

/** A gRPC message's last byte crossed (its `_bb.seq`); d = its direction. */
export interface GrpcSeqRecord { r: 'gm'; x: number; ts: number; seq: number; d: 'send' | 'receive' }
/** `bb shadow`: what the run knows of an exchange beyond its traffic (its shared id; why it was not mirrored). Later tags merge into earlier ones. */
export interface ShadowTagRecord { r: 'tag'; x: number; ts: number; shadow: HarShadow }
/** A value redacted as a secret, by its placeholder and lengths only (redact-values.ts SecretFields): readers find it by value. */
export interface SecretRecord extends SecretFields { r: 'sec' }
/** Any record after the header. */
export type JournalRecord =
  | SecretRecord | ShadowTagRecord | PageRecord | StartRecord | BodyRecord | RequestEndRecord | RestHashRecord | ResponseStartRecord | DoneRecord | FailRecord
  | AbortRecord | ClientErrorRecord | ResetBurstRecord | UpgradeRecord | InformationalRecord | WsMessageRecord | WsErrorRecord | WsCloseRecord | GrpcSeqRecord;

/** Record kinds that end an exchange's entry. */
export const END_RECORDS: ReadonlySet<string> = new Set(['done', 'fail', 'abort', 'cerr', 'wsc']);

/** Parses one journal line; undefined when it is not a whole record (a torn write). */
export function parseJournalLine(line: string): HeaderRecord | JournalRecord | undefined {
  if (line === '') return undefined;
  try {
    const rec = JSON.parse(line) as { r?: unknown };
    return rec !== null && typeof rec === 'object' && typeof rec.r === 'string' ? (rec as JournalRecord) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A follower of the journal in the recording's own process (live.ts): handed
 * the records as they are queued (objects equal to what a reader parses back
 * from their lines, so nothing is parsed again), each line's place, and a
 * call once they are written (bodies first).
 */
export interface JournalTap {
  /** A record queued, in journal order (unfolded): it belongs to the next line queued (a folded line's records all to it). */
  record(r: JournalRecord): void;
  /** A line queued: its byte offset in the journal and its length in bytes (without its newline). */
  line(at: number, bytes: number): void;
  /** Every line queued so far is written (a failed write counted as usual), its bodies before it. */
  written(): void;
}

/**
 * A turn's queued lines (bytes) or bodies past which the journal writes them at once, mid-turn. One turn can read
 * 2 MB from each of many sockets (libuv reads a stream up to 32 times a turn): 700,000 one-byte WebSocket messages a
 * connection, whose lines, body views and a live view's records held until the turn's end took a capture to 650 MB.
 */
const FLUSH_LINE_BYTES = 1024 * 1024;
const FLUSH_BODIES = 16 * 1024;

/**
 * Appends to `.journal` and `.bodies`. Writes are queued and flushed once per
 * event-loop turn (setImmediate), at once with flushNow(), or as soon as a
 * turn has queued FLUSH_LINE_BYTES of lines or FLUSH_BODIES bodies — bodies
 * first, then journal lines, so a record never points at bytes not yet written.
 * A failing write never throws: it is reported through onError and counted.
 */
export class JournalAppender {
  private bodyQueue: Buffer[] = [];
  /** The `.bodies` offset of the first queued body buffer (the queue's bytes follow each other from there). */
  private queuedAt = 0;
  private readonly lines = new LineBuffer();
  private bodiesOffset = 0;
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  /** Inside flushNow (its release queues lines too: no flush within the flush). */
  private flushing = false;
  /** Number of failed writes so far. */
  errors = 0;
  /** Seals body bytes as they are appended (redaction on); set before the first body. */
  seal: BodySeal | undefined;
  /** The live capture following this journal in process (attach); unset costs nothing. */
  private tap: JournalTap | undefined;
  /** While tapped: the journal offset the queued lines start at. */
  private tapAt = 0;
  /** Where the line begun by beginLine() starts among the queued bytes. */
  private lineFrom = 0;
  /** Called first by every flush: its owner queues the lines it holds to fold more into (the recorder's, journal-fold.ts). */
  release: (() => void) | undefined;
  /** Called before any line is queued: its owner queues a line it holds open to extend (the recorder's body line), keeping the order. */
  beforeLine: (() => void) | undefined;

  private constructor(
    private journalFd: number,
    private bodiesFd: number,
    private readonly onError: (err: Error) => void,
  ) {}

  /** Creates both files owner-only; the journal exclusively (another capture on the same out fails). */
  static create(journalPath: string, bodiesPath: string, onError: (err: Error) => void): JournalAppender {
    const journalFd = openSync(journalPath, 'wx', 0o600);
    let bodiesFd: number;
    try {
      // The exclusive journal makes the name ours: whatever is at the sidecar's path is an earlier run's
      // leftover, removed (a symlink itself, never the file it points to, as the HAR writer does) and made anew.
      rmSync(bodiesPath, { force: true });
      bodiesFd = openSync(bodiesPath, 'wx', 0o600);
      fchmodSync(bodiesFd, 0o600);
    } catch (err) {
      closeSync(journalFd);
      rmSync(journalPath, { force: true });
      throw err;
    }
    return new JournalAppender(journalFd, bodiesFd, onError);
  }

  /** Queues body bytes; returns the offset they will have in `.bodies`. */
  appendBody(bytes: Buffer): number {
    const at = this.bodiesOffset;
    if (bytes.length === 0) return at;
    if (this.bodyQueue.length === 0) this.queuedAt = at;
    // Sealed at flush, a turn's small bodies in one cipher call (one buffer, not one per chunk).
    this.bodyQueue.push(bytes);
    this.bodiesOffset += bytes.length;
    this.schedule();
    return at;
  }

  /** Queues one record. */
  appendRecord(record: HeaderRecord | JournalRecord): void {
    this.beforeLine?.();
    const json = JSON.stringify(record);
    // What a reader parses back, sharing nothing with the caller's object (these kinds are the rare ones).
    if (this.tap && record.r !== 'bb-journal') this.tap.record(JSON.parse(json) as JournalRecord);
    this.queue(json);
    this.schedule();
    this.flushIfFull();
  }

  /** The turn's lines, to write one line into piece by piece (LineBuffer's ascii/num/utf8), then endLine() before anything else is queued: the recorder's hot records. */
  beginLine(): LineBuffer {
    this.beforeLine?.();
    this.lineFrom = this.lines.size;
    return this.lines;
  }

  /** Ends the line begun by beginLine() and queues it, as appendRecord() queues a whole one (the recorder tells the tap its records itself: tapped). */
  endLine(): void {
    this.lines.newline();
    if (this.tap) this.tap.line(this.tapAt + this.lineFrom, this.lines.size - this.lineFrom - 1);
    this.schedule();
    this.flushIfFull();
  }

  // A turn that has queued a lot writes it now: what waits for the turn's end stays bounded.
  private flushIfFull(): void {
    if (!this.flushing && (this.lines.size >= FLUSH_LINE_BYTES || this.bodyQueue.length >= FLUSH_BODIES)) this.flushNow();
  }

  /** The live capture's tap while one is attached (the recorder hands it the records of the lines it writes by hand). */
  get tapped(): JournalTap | undefined {
    return this.tap;
  }

  /** Attaches an in-process follower from here on (everything queued is written first); returns the journal's size, where it takes over. */
  attach(tap: JournalTap): number {
    this.flushNow();
    this.tapAt = this.journalSize();
    this.tap = tap;
    return this.tapAt;
  }

  private queue(json: string): void {
    if (!this.tap) {
      this.lines.append(json);
      return;
    }
    const from = this.lines.size;
    this.lines.append(json);
    this.tap.line(this.tapAt + from, this.lines.size - from - 1);
  }

  private journalSize(): number {
    try {
      return fstatSync(this.journalFd).size;
    } catch {
      return this.tapAt;
    }
  }

  /** Makes sure a flush comes by the end of this turn (a line is held for it: see release). */
  soon(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.flushNow();
    });
  }

  /** Writes everything queued with synchronous write calls (bodies, then lines). */
  flushNow(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      this.flushQueued();
    } finally {
      this.flushing = false;
    }
  }

  private flushQueued(): void {
    this.release?.();
    if (this.bodyQueue.length > 0) {
      // One writev of the queued buffers: no concatenated copy of the turn's body bytes.
      const bodies = this.seal ? this.seal.applyToRun(this.bodyQueue, this.queuedAt) : this.bodyQueue;
      this.bodyQueue = [];
      if (!this.writeAllv(this.bodiesFd, bodies)) this.resyncBodiesOffset();
    }
    if (!this.lines.empty) {
      const bytes = this.lines.bytes();
      const ok = this.writeAll(this.journalFd, bytes);
      this.lines.clear();
      if (this.tap) {
        // A failed write leaves the file shorter than counted: later lines are placed where they really land.
        this.tapAt = ok ? this.tapAt + bytes.length : this.journalSize();
        this.tell(this.tap);
      }
    }
  }

  // A follower that throws must not reach traffic: counted and reported like a failed write.
  private tell(tap: JournalTap): void {
    try {
      tap.written();
    } catch (err) {
      this.writeFailed(err as Error);
    }
  }

  private writeAllv(fd: number, buffers: Buffer[]): boolean {
    try {
      let pending = buffers;
      // Bounded: each pass writes at least one byte or throws.
      while (pending.length > 0) {
        const batch = pending.length > IOV_MAX ? pending.slice(0, IOV_MAX) : pending;
        let written = writevSync(fd, batch);
        if (written <= 0) throw Object.assign(new Error('writev wrote nothing'), { code: 'EIO' });
        let done = 0;
        while (done < batch.length && written >= batch[done]!.length) written -= batch[done++]!.length;
        const rest = pending.slice(done);
        if (written > 0) rest[0] = rest[0]!.subarray(written);
        pending = rest;
      }
      return true;
    } catch (err) {
      this.writeFailed(err as Error);
      return false;
    }
  }

  /** Counts and reports a failed write; an error reporter that throws must not reach traffic either. */
  private writeFailed(err: Error): void {
    this.errors++;
    try {
      this.onError(err);
    } catch {
      // ignored: see above
    }
  }

  private writeAll(fd: number, buf: Buffer): boolean {
    try {
      let done = 0;
      // Bounded: each pass writes at least one byte or throws.
      while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
      return true;
    } catch (err) {
      this.writeFailed(err as Error);
      return false;
    }
  }

  // After a failed body write the file is shorter than the offsets handed out:
  // point later records at where bytes really land. Records already queued
  // keep their (now dangling) offsets; the HAR writer notes such bodies as lost.
  private resyncBodiesOffset(): void {
    try {
      this.bodiesOffset = fstatSync(this.bodiesFd).size;
    } catch {
      // The descriptor is gone: nothing more will be written anyway.
    }
  }

  /** Flushes and closes both files. Idempotent. */
  close(): void {
    if (this.closed) return;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.flushNow();
    this.closed = true;
    for (const fd of [this.journalFd, this.bodiesFd]) {
      try {
        closeSync(fd);
      } catch (err) {
        this.errors++;
        this.onError(err as Error);
      }
    }
  }
}
