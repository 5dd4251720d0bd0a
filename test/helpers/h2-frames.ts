// Builds h2 frames byte by byte for tests (RFC 9113 section 4.1), so the
// bytes under test are written out here, not produced by the code under test.

/** Frame type values (RFC 9113 section 6). */
export const T = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;

/** Flag bits (RFC 9113 section 6). */
export const F = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** The client connection preface. */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** One frame: 24-bit length, type, flags, 31-bit stream id, payload (bytes, or hex with spaces allowed). */
export function h2Frame(type: number, flags: number, streamId: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload.replace(/\s+/g, ''), 'hex') : payload;
  const head = Buffer.alloc(9);
  head.writeUIntBE(body.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, body]);
}

/** An empty SETTINGS frame, the shortest legal first frame. */
export const EMPTY_SETTINGS = h2Frame(T.SETTINGS, 0, 0);
