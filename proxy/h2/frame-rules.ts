// The rules of RFC 9113 a frame parser checks without reading payloads, and
// the SETTINGS values it refuses: pure functions over a frame's header
// fields, kept apart from the parser's state machine (frames.ts).
import { DEFAULT_MAX_FRAME_SIZE, SETTINGS, type H2ConnectionError, type H2ErrorName } from './frame-types.js';

/** Frame type values (RFC 9113 section 6). */
export const TYPE = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
/** Flag bits (RFC 9113 section 6). */
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
/** Frame type names by value. */
export const NAMES = ['DATA', 'HEADERS', 'PRIORITY', 'RST_STREAM', 'SETTINGS', 'PUSH_PROMISE', 'PING', 'GOAWAY', 'WINDOW_UPDATE', 'CONTINUATION'];

const MAX_WINDOW = 2 ** 31 - 1;
const MAX_FRAME_SIZE_LIMIT = 2 ** 24 - 1;

/** A frame header and what the parser knows when it arrives. */
export interface HeaderContext {
  /** Payload length. */
  length: number;
  /** Frame type. */
  type: number;
  /** Flag bits. */
  flags: number;
  /** Stream id, reserved bit cleared. */
  streamId: number;
  /** The receiving side's SETTINGS_MAX_FRAME_SIZE. */
  maxFrameSize: number;
  /** A frame was read before this one (the first must be SETTINGS). */
  seenFrame: boolean;
  /** The bytes come from the client. */
  fromClient: boolean;
  /** The header block still waiting for CONTINUATION, if any. */
  block: { streamId: number; size: number; frames: number } | undefined;
  /** The largest header block in bytes (CONTINUATION flood guard). */
  maxHeaderBlock: number;
  /** The most CONTINUATION frames in one header block. */
  maxContinuations: number;
}

/** The checks of RFC 9113 sections 3.4, 4.2, 6 and 10.5 that need only a frame's header: the connection error, if any. */
export function checkFrameHeader(h: HeaderContext): [H2ErrorName, string] | undefined {
  const { length, type, flags, streamId, block } = h;
  const name = NAMES[type] ?? `frame type 0x${type.toString(16)}`;
  if (length > h.maxFrameSize) {
    return ['FRAME_SIZE_ERROR', `a ${name} frame of ${length} bytes exceeds SETTINGS_MAX_FRAME_SIZE ${h.maxFrameSize} (RFC 9113 section 4.2)`];
  }
  if (!h.seenFrame && (type !== TYPE.SETTINGS || flags & FLAG.ACK)) {
    return ['PROTOCOL_ERROR', `the first frame is ${name}, not SETTINGS (RFC 9113 section 3.4)`];
  }
  //
  // While a header block is open, only its CONTINUATIONs may come (section 6.10).
  //
  if (block && (type !== TYPE.CONTINUATION || streamId !== block.streamId)) {
    return ['PROTOCOL_ERROR', `a ${name} frame on stream ${streamId} interrupts the header block of stream ${block.streamId} (RFC 9113 section 6.10)`];
  }
  switch (type) {
    case TYPE.DATA:
    case TYPE.HEADERS:
    case TYPE.PRIORITY:
    case TYPE.RST_STREAM:
    case TYPE.PUSH_PROMISE:
    case TYPE.CONTINUATION:
      if (streamId === 0) return ['PROTOCOL_ERROR', `a ${name} frame on stream 0 (RFC 9113 section 6)`];
      break;
    case TYPE.SETTINGS:
    case TYPE.PING:
    case TYPE.GOAWAY:
      if (streamId !== 0) return ['PROTOCOL_ERROR', `a ${name} frame on stream ${streamId}, not 0 (RFC 9113 section 6)`];
      break;
  }
  const sizeError = (rule: string): [H2ErrorName, string] => ['FRAME_SIZE_ERROR', `a ${name} frame of ${length} bytes; ${rule}`];
  switch (type) {
    case TYPE.DATA:
      if (flags & FLAG.PADDED && length < 1) return sizeError('a PADDED DATA frame holds at least its pad length (RFC 9113 section 6.1)');
      break;
    case TYPE.RST_STREAM:
      if (length !== 4) return sizeError('RST_STREAM is 4 bytes (RFC 9113 section 6.4)');
      break;
    case TYPE.SETTINGS:
      if (flags & FLAG.ACK && length !== 0) return sizeError('a SETTINGS ACK is empty (RFC 9113 section 6.5)');
      if (length % 6 !== 0) return sizeError('SETTINGS is a multiple of 6 bytes (RFC 9113 section 6.5)');
      break;
    case TYPE.PING:
      if (length !== 8) return sizeError('PING is 8 bytes (RFC 9113 section 6.7)');
      break;
    case TYPE.GOAWAY:
      if (length < 8) return sizeError('GOAWAY is at least 8 bytes (RFC 9113 section 6.8)');
      break;
    case TYPE.WINDOW_UPDATE:
      if (length !== 4) return sizeError('WINDOW_UPDATE is 4 bytes (RFC 9113 section 6.9)');
      break;
    case TYPE.PUSH_PROMISE:
      if (h.fromClient) return ['PROTOCOL_ERROR', 'a client sent PUSH_PROMISE (RFC 9113 section 8.4)'];
      break;
    case TYPE.CONTINUATION:
      if (!block) return ['PROTOCOL_ERROR', `a CONTINUATION frame on stream ${streamId} follows no open header block (RFC 9113 section 6.10)`];
      break;
  }
  //
  // The CONTINUATION flood guard: a header block is held until END_HEADERS,
  // so its size and frame count are capped (RFC 9113 section 10.5).
  //
  if (type === TYPE.HEADERS || type === TYPE.PUSH_PROMISE || type === TYPE.CONTINUATION) {
    if ((block?.size ?? 0) + length > h.maxHeaderBlock) {
      return ['ENHANCE_YOUR_CALM', `the header block of stream ${streamId} exceeds ${h.maxHeaderBlock} bytes (RFC 9113 section 10.5)`];
    }
    if (block && block.frames > h.maxContinuations) {
      return ['ENHANCE_YOUR_CALM', `the header block of stream ${streamId} spans more than ${h.maxContinuations} CONTINUATION frames (RFC 9113 section 10.5)`];
    }
  }
  return undefined;
}

/** The [identifier, value] pairs of a SETTINGS payload, or the connection error one of its values is (RFC 9113 section 6.5.2). */
export function readSettings(p: Buffer): Array<[number, number]> | H2ConnectionError {
  const settings: Array<[number, number]> = [];
  for (let at = 0; at < p.length; at += 6) {
    const id = p.readUInt16BE(at);
    const value = p.readUInt32BE(at + 2);
    if (id === SETTINGS.ENABLE_PUSH && value > 1) {
      return { code: 'PROTOCOL_ERROR', message: `SETTINGS_ENABLE_PUSH is ${value}, not 0 or 1 (RFC 9113 section 6.5.2)` };
    }
    if (id === SETTINGS.INITIAL_WINDOW_SIZE && value > MAX_WINDOW) {
      return { code: 'FLOW_CONTROL_ERROR', message: `SETTINGS_INITIAL_WINDOW_SIZE is ${value}, over 2^31-1 (RFC 9113 section 6.5.2)` };
    }
    if (id === SETTINGS.MAX_FRAME_SIZE && (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_FRAME_SIZE_LIMIT)) {
      return { code: 'PROTOCOL_ERROR', message: `SETTINGS_MAX_FRAME_SIZE is ${value}, outside 16384..16777215 (RFC 9113 section 6.5.2)` };
    }
    settings.push([id, value]);
  }
  return settings;
}
