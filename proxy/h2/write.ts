// The only h2 frames bb writes itself: GOAWAY when it closes a connection
// for a protocol error (RFC 9113 sections 5.4.1 and 6.8), RST_STREAM when it
// gives up on one stream (section 6.4). Neither touches HPACK state, so bb
// can add them between whole frames of a byte stream it otherwise only copies.
import { errorCode, type H2ErrorName } from './frame-types.js';

const GOAWAY = 0x7;
const RST_STREAM = 0x3;

function frame(type: number, streamId: number, payload: Buffer): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = 0;
  out.writeUInt32BE(streamId & 0x7fffffff, 5);
  payload.copy(out, 9);
  return out;
}

/** A GOAWAY frame: the last stream id the sender may have processed, the error code, debug text. */
export function goawayFrame(lastStreamId: number, code: H2ErrorName, debug = ''): Buffer {
  const text = Buffer.from(debug, 'utf8');
  const payload = Buffer.alloc(8 + text.length);
  payload.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
  payload.writeUInt32BE(errorCode(code), 4);
  text.copy(payload, 8);
  return frame(GOAWAY, 0, payload);
}

/** A RST_STREAM frame for one stream. */
export function rstStreamFrame(streamId: number, code: H2ErrorName): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(errorCode(code), 0);
  return frame(RST_STREAM, streamId, payload);
}
