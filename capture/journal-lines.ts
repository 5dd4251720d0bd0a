// The hottest journal records as JSON text, written by hand: every exchange
// makes a start, a request end, a response start and a done record, and
// JSON.stringify of their objects (built only to be serialized) was ~5 µs of
// a small exchange (bench/profiles/README.md). Each function returns exactly
// the text JSON.stringify writes for that record (same keys, same order,
// optional keys left out when absent); strings and header lists go through
// JSON.stringify, numbers are whole or finite floats and print as JSON does.
import type { DoneRecord, RequestEndRecord, ResponseStartRecord, StartRecord } from './journal.js';
import type { LineBuffer } from './line-buffer.js';

const str = JSON.stringify;

/**
 * The JSON of a header list, remembered for the next list equal to it: one
 * client's requests (and one server's responses) mostly repeat their
 * headers, and an h2 peer's HPACK-indexed fields even come as the same
 * strings, so comparing costs less than JSON.stringify's text and garbage.
 * A pure cache of content: any list gets exactly JSON.stringify's text.
 */
class ListJson {
  private last: readonly string[] = [];
  private json = '[]';

  /** JSON.stringify(list). */
  of(list: readonly string[]): string {
    const last = this.last;
    if (list.length === last.length) {
      let i = 0;
      while (i < list.length && list[i] === last[i]) i++;
      if (i === list.length) return this.json;
    }
    // A copy: the caller's array is not ours to keep.
    this.last = list.slice();
    return (this.json = str(list));
  }
}

// One memo per kind of list (requests and responses alternate on a connection).
const requestHeads = new ListJson();
const responseHeads = new ListJson();

/** A string's JSON, remembered for the next equal string (a connection id, an origin, a scheme: the same on every exchange of a connection). */
class StringJson {
  private last = '';
  private json = '""';

  /** JSON.stringify(s). */
  of(s: string): string {
    if (s === this.last) return this.json;
    this.last = s;
    return (this.json = str(s));
  }
}

const connections = new StringJson();
const upstreams = new StringJson();
const schemes = new StringJson();
const methods = new StringJson();
const versions = new StringJson();
const reasons = new StringJson();

// Trailers are mostly none.
function trailers(tr: readonly string[]): string {
  return tr.length === 0 ? '[]' : str(tr);
}

/** A StartRecord's line. */
export function startLine(r: Omit<StartRecord, 'r'>): string {
  return startOpen(r) + '}';
}

/** The StartRecord a start line reads back as: optional members left out when absent, the header list copied (the caller's is not ours to keep). */
export function startRecord(r: Omit<StartRecord, 'r'>): StartRecord {
  const rec: StartRecord = { r: 'start', x: r.x, seq: r.seq, c: r.c, ts: r.ts, scheme: r.scheme, method: r.method, target: r.target, v: r.v, h: r.h.slice(), up: r.up, upg: r.upg };
  if (r.page !== undefined) rec.page = r.page;
  if (r.sid !== undefined) rec.sid = r.sid;
  if (r.push !== undefined) rec.push = r.push;
  return rec;
}

/** A StartRecord's line without its closing brace (to fold more members in: journal-fold.ts). */
export function startOpen(r: Omit<StartRecord, 'r'>): string {
  let line = `{"r":"start","x":${r.x},"seq":${r.seq},"c":${connections.of(r.c)},"ts":${r.ts},"scheme":${schemes.of(r.scheme)},"method":${methods.of(r.method)}`;
  line += `,"target":${str(r.target)},"v":${versions.of(r.v)},"h":${requestHeads.of(r.h)},"up":${upstreams.of(r.up)},"upg":${r.upg}`;
  if (r.page !== undefined) line += `,"page":${str(r.page)}`;
  if (r.sid !== undefined) line += `,"sid":${r.sid}`;
  if (r.push !== undefined) line += `,"push":${r.push}`;
  return line;
}

/** A RequestEndRecord's line. */
export function requestEndLine(r: Omit<RequestEndRecord, 'r'>): string {
  return `{"r":"qe","x":${r.x},"ts":${r.ts},"tr":${trailers(r.tr)}}`;
}

/** A ResponseStartRecord's line. */
export function responseStartLine(r: Omit<ResponseStartRecord, 'r'>): string {
  return responseStartOpen(r) + '}';
}

/** A ResponseStartRecord's line without its closing brace (to fold more members in: journal-fold.ts). */
export function responseStartOpen(r: Omit<ResponseStartRecord, 'r'>): string {
  return `{"r":"rs","x":${r.x},"ts":${r.ts},"st":${r.st},"sm":${reasons.of(r.sm)},"v":${versions.of(r.v)},"h":${responseHeads.of(r.h)}`;
}

/** A request end folded into its start: the members `,"qe":ts,"tr":[...]`. */
export function foldedRequestEnd(ts: number, tr: readonly string[]): string {
  return `,"qe":${ts},"tr":${trailers(tr)}`;
}

/** A done folded into its response start: the members `,"done":ts,"seq":n,"tr":[...]`. */
export function foldedDone(ts: number, seq: number, tr: readonly string[]): string {
  return `,"done":${ts},"seq":${seq},"tr":${trailers(tr)}`;
}

/** A DoneRecord's line. */
export function doneLine(r: Omit<DoneRecord, 'r'>): string {
  return `{"r":"done","x":${r.x},"ts":${r.ts},"seq":${r.seq},"tr":${trailers(r.tr)}}`;
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

const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const WSM = ascii('{"r":"wsm","x":');
const TS = ascii(',"ts":');
const SEQ = ascii(',"seq":');
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
const PAGE = ascii(',"page":');
const CLOSE = ascii('}');

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
  if (p.n === 0) b.ascii(N0);
  else {
    b.member(O, p.o);
    b.member(N, p.n);
  }
  b.member(W, p.w);
  b.member(F, m.frames);
  b.ascii(m.compressed ? Z_TRUE : Z_FALSE);
  if (m.closeCode !== undefined) b.member(CC, m.closeCode);
  if (m.closeReason !== undefined) {
    b.ascii(CR);
    b.utf8(str(m.closeReason));
  }
  if (p.h !== undefined) {
    // A digest's text (hex or base64url): nothing to escape.
    b.ascii(H);
    b.utf8(p.h);
    b.ascii(QUOTE);
  }
  if (p.page !== undefined) {
    b.ascii(PAGE);
    b.utf8(str(p.page));
  }
  b.ascii(CLOSE);
}
