// The hottest journal records as JSON, written by hand: every exchange
// makes a start, a request end, a response start and a done record (folded
// into two lines: journal-fold.ts), and JSON.stringify of their objects
// (built only to be serialized) was ~5 µs of a small exchange
// (bench/profiles/README.md). Each function writes into the turn's bytes
// (LineBuffer) exactly the bytes JSON.stringify writes for that record (same
// keys, same order, optional keys left out when absent); strings and header
// lists go through JSON.stringify, numbers are whole or finite floats and
// print as JSON does (timestamps by hand: timestamp-text.ts).
import type { DoneRecord, RequestEndRecord, ResponseStartRecord, StartRecord } from './journal.js';
import type { LineBuffer } from './line-buffer.js';

const str = JSON.stringify;

/**
 * A JSON text remembered for the next equal value, and its UTF-8 bytes from
 * its second use on: copying them into a line costs less than encoding the
 * text again (a value seen once is written as text, never encoded twice).
 */
class RememberedJson {
  private json: string;
  private bytes: Uint8Array | undefined;

  constructor(json: string) {
    this.json = json;
  }

  /** Writes the remembered text's bytes. */
  protected again(b: LineBuffer): void {
    b.encoded((this.bytes ??= Buffer.from(this.json, 'utf8')));
  }

  /** Remembers a new text and writes it. */
  protected fresh(b: LineBuffer, json: string): void {
    this.json = json;
    this.bytes = undefined;
    b.utf8(json);
  }
}

/**
 * The JSON of a header list, remembered for the next list equal to it: one
 * client's requests (and one server's responses) mostly repeat their
 * headers, and an h2 peer's HPACK-indexed fields even come as the same
 * strings, so comparing costs less than JSON.stringify's text and garbage.
 * A pure cache of content: any list gets exactly JSON.stringify's text.
 */
class ListJson extends RememberedJson {
  private last: readonly string[] = [];

  constructor() {
    super('[]');
  }

  /** Writes `name` and JSON.stringify(list)'s bytes. */
  write(b: LineBuffer, name: Uint8Array, list: readonly string[]): void {
    b.ascii(name);
    const last = this.last;
    if (list.length === last.length) {
      let i = 0;
      while (i < list.length && list[i] === last[i]) i++;
      if (i === list.length) return this.again(b);
    }
    // A copy: the caller's array is not ours to keep.
    this.last = list.slice();
    this.fresh(b, str(list));
  }
}

// One memo per kind of list (requests and responses alternate on a connection).
const requestHeads = new ListJson();
const responseHeads = new ListJson();

/** A string's JSON, remembered for the next equal string (a connection id, an origin, a scheme: the same on every exchange of a connection). */
class StringJson extends RememberedJson {
  private last = '';

  constructor() {
    super('""');
  }

  /** Writes `name` and JSON.stringify(s)'s bytes. */
  write(b: LineBuffer, name: Uint8Array, s: string): void {
    b.ascii(name);
    if (s === this.last) return this.again(b);
    this.last = s;
    this.fresh(b, str(s));
  }
}

const connections = new StringJson();
const upstreams = new StringJson();
const schemes = new StringJson();
const methods = new StringJson();
const versions = new StringJson();
const reasons = new StringJson();
// A client mostly asks for the same few targets (an h2 connection's streams, a poll): the last one's JSON is kept too.
const targets = new StringJson();

// The records' constant pieces, pre-encoded (ascii below); a record is written
// into the turn's bytes piece by piece (LineBuffer's ascii/num/utf8), as a
// WebSocket message's line is (writeWsmLine): a template literal of a dozen
// pieces is a rope flattened before its UTF-8 write, and String(ts) of each
// timestamp was V8's general double printing (issue 39).
const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const START = ascii('{"r":"start","x":');
const SEQ = ascii(',"seq":');
const C = ascii(',"c":');
const TS = ascii(',"ts":');
const SCHEME = ascii(',"scheme":');
const METHOD = ascii(',"method":');
const TARGET = ascii(',"target":');
const V = ascii(',"v":');
const H_LIST = ascii(',"h":');
const UP = ascii(',"up":');
const UPG_TRUE = ascii(',"upg":true');
const UPG_FALSE = ascii(',"upg":false');
const PAGE = ascii(',"page":');
const SID = ascii(',"sid":');
const PUSH = ascii(',"push":');
const RS = ascii('{"r":"rs","x":');
const ST = ascii(',"st":');
const SM = ascii(',"sm":');
const QE_LINE = ascii('{"r":"qe","x":');
const DONE_LINE = ascii('{"r":"done","x":');
const QE = ascii(',"qe":');
const TAG = ascii(',"tag":{"ts":');
const TAG_SHADOW = ascii(',"shadow":');
const DONE = ascii(',"done":');
const TR = ascii(',"tr":');
const TR_NONE = ascii(',"tr":[]');
const CLOSE = ascii('}');

// The `,"tr":[...]` member (trailers are mostly none).
function writeTrailers(b: LineBuffer, tr: readonly string[]): void {
  if (tr.length === 0) b.ascii(TR_NONE);
  else b.jsonMember(TR, str(tr));
}

/** A StartRecord's line written into `b` without its closing brace (to fold more members in: journal-fold.ts) nor newline. */
export function writeStartOpen(b: LineBuffer, r: Omit<StartRecord, 'r'>): void {
  b.member(START, r.x);
  b.member(SEQ, r.seq);
  connections.write(b, C, r.c);
  b.member(TS, r.ts);
  schemes.write(b, SCHEME, r.scheme);
  methods.write(b, METHOD, r.method);
  targets.write(b, TARGET, r.target);
  versions.write(b, V, r.v);
  requestHeads.write(b, H_LIST, r.h);
  upstreams.write(b, UP, r.up);
  b.ascii(r.upg ? UPG_TRUE : UPG_FALSE);
  if (r.page !== undefined) b.jsonMember(PAGE, str(r.page));
  if (r.sid !== undefined) b.member(SID, r.sid);
  if (r.push !== undefined) b.member(PUSH, r.push);
}

/** The StartRecord a start line reads back as: optional members left out when absent, the header list copied (the caller's is not ours to keep). */
export function startRecord(r: Omit<StartRecord, 'r'>): StartRecord {
  const rec: StartRecord = { r: 'start', x: r.x, seq: r.seq, c: r.c, ts: r.ts, scheme: r.scheme, method: r.method, target: r.target, v: r.v, h: r.h.slice(), up: r.up, upg: r.upg };
  if (r.page !== undefined) rec.page = r.page;
  if (r.sid !== undefined) rec.sid = r.sid;
  if (r.push !== undefined) rec.push = r.push;
  return rec;
}

/** A ResponseStartRecord's line written into `b` without its closing brace (to fold more members in: journal-fold.ts) nor newline. */
export function writeResponseStartOpen(b: LineBuffer, r: Omit<ResponseStartRecord, 'r'>): void {
  b.member(RS, r.x);
  b.member(TS, r.ts);
  b.member(ST, r.st);
  reasons.write(b, SM, r.sm);
  versions.write(b, V, r.v);
  responseHeads.write(b, H_LIST, r.h);
}

/** Closes a line written piece by piece: its `}` (its newline is the journal's: endLine). */
export function writeClose(b: LineBuffer): void {
  b.ascii(CLOSE);
}

/** A RequestEndRecord's line written into `b` (no newline). */
export function writeRequestEndLine(b: LineBuffer, r: Omit<RequestEndRecord, 'r'>): void {
  b.member(QE_LINE, r.x);
  b.member(TS, r.ts);
  writeTrailers(b, r.tr);
  b.ascii(CLOSE);
}

/** A request end folded into its start: the members `,"qe":ts,"tr":[...]`. */
export function writeFoldedRequestEnd(b: LineBuffer, ts: number, tr: readonly string[]): void {
  b.member(QE, ts);
  writeTrailers(b, tr);
}

/** A `bb shadow` tag folded into its start: the member `,"tag":{"ts":ts,"shadow":{...}}` (a ShadowTagRecord without `r` and `x`). */
export function writeFoldedTag(b: LineBuffer, ts: number, shadow: object): void {
  b.member(TAG, ts);
  b.jsonMember(TAG_SHADOW, JSON.stringify(shadow));
  b.ascii(CLOSE);
}

/** A done folded into its response start: the members `,"done":ts,"seq":n,"tr":[...]`. */
export function writeFoldedDone(b: LineBuffer, ts: number, seq: number, tr: readonly string[]): void {
  b.member(DONE, ts);
  b.member(SEQ, seq);
  writeTrailers(b, tr);
}

/** A DoneRecord's line written into `b` (no newline). */
export function writeDoneLine(b: LineBuffer, r: Omit<DoneRecord, 'r'>): void {
  b.member(DONE_LINE, r.x);
  b.member(TS, r.ts);
  b.member(SEQ, r.seq);
  writeTrailers(b, r.tr);
  b.ascii(CLOSE);
}

/** What a WebSocket message's line says of its message (a ws-message fact has these members). */
export interface WsmMessage {
  exchangeId: number;
  time: number;
  direction: 'send' | 'receive';
  opcode: number;
  frames: number;
  compressed: boolean;
  closeCode?: number;
  closeReason?: string;
}

/** Where a WebSocket message's kept bytes are, and what else its line carries. */
export interface WsmPlace {
  seq: number;
  /** `.bodies` offset of the kept bytes (written only when kept > 0). */
  o: number;
  /** Bytes kept. */
  n: number;
  /** The message's whole size. */
  w: number;
  /** The digest of the bytes past the cut (rest-hash.ts), if any. */
  h: string | undefined;
  page: string | undefined;
}

const WSM = ascii('{"r":"wsm","x":');
const SEND = ascii(',"d":"send","op":');
const RECEIVE = ascii(',"d":"receive","op":');
const O = ascii(',"o":');
const N = ascii(',"n":');
const N0 = ascii(',"n":0');
const W = ascii(',"w":');
const F = ascii(',"f":');
const Z_TRUE = ascii(',"z":true');
const Z_FALSE = ascii(',"z":false');
const CC = ascii(',"cc":');
const CR = ascii(',"cr":');
const H = ascii(',"h":"');
const QUOTE = ascii('"');

/**
 * A WsMessageRecord's line, written into `b` piece by piece (no string: one
 * per message, line-buffer.ts says why) without its newline; the same bytes
 * JSON.stringify writes for the record (`o` only when bytes were kept).
 */
export function writeWsmLine(b: LineBuffer, m: WsmMessage, p: WsmPlace): void {
  b.member(WSM, m.exchangeId);
  b.member(TS, m.time);
  b.member(SEQ, p.seq);
  b.member(m.direction === 'send' ? SEND : RECEIVE, m.opcode);
  writeSlice(b, p.o, p.n, p.w);
  b.member(F, m.frames);
  b.ascii(m.compressed ? Z_TRUE : Z_FALSE);
  if (m.closeCode !== undefined) b.member(CC, m.closeCode);
  if (m.closeReason !== undefined) b.jsonMember(CR, str(m.closeReason));
  if (p.h !== undefined) {
    // A digest's text (hex or base64url): nothing to escape.
    b.ascii(H);
    b.utf8(p.h);
    b.ascii(QUOTE);
  }
  if (p.page !== undefined) b.jsonMember(PAGE, str(p.page));
  b.ascii(CLOSE);
}

const QB_LINE = ascii('{"r":"qb","x":');
const RB_LINE = ascii('{"r":"rb","x":');
const QB_FIRST = ascii(',"qb":[{"ts":');
const RB_FIRST = ascii(',"rb":[{"ts":');
const NEXT_CHUNK = ascii(',{"ts":');
const LIST_END = ascii(']');

// A body slice's members `,"o":..,"n":..,"w":..` (o only when bytes were kept).
function writeSlice(b: LineBuffer, o: number, n: number, w: number): void {
  if (n === 0) b.ascii(N0);
  else {
    b.member(O, o);
    b.member(N, n);
  }
  b.member(W, w);
}

/** A BodyRecord's line written into `b` (no newline): `o` is the slice's `.bodies` offset, written only when n > 0. */
export function writeBodyLine(b: LineBuffer, request: boolean, x: number, ts: number, o: number, n: number, w: number): void {
  b.member(request ? QB_LINE : RB_LINE, x);
  b.member(TS, ts);
  writeSlice(b, o, n, w);
  b.ascii(CLOSE);
}

/** A body chunk folded into a held start (request) or response start: the list's opening `,"qb":[` or `,"rb":[` before the first, a comma before the others. */
export function writeFoldedChunk(b: LineBuffer, request: boolean, first: boolean, ts: number, o: number, n: number, w: number): void {
  if (first) b.ascii(request ? QB_FIRST : RB_FIRST);
  else b.ascii(NEXT_CHUNK);
  b.num(ts);
  writeSlice(b, o, n, w);
  b.ascii(CLOSE);
}

/** Ends a folded chunk list (after its last chunk). */
export function writeChunkListEnd(b: LineBuffer): void {
  b.ascii(LIST_END);
}
