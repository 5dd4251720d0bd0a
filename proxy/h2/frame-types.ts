// The vocabulary of RFC 9113 frames as the passive parser (frames.ts)
// reports them: error code names, setting identifiers, and one tagged
// union of frame facts.

/** Error code names by value (RFC 9113 section 7). */
const ERROR_NAMES = [
  'NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT', 'STREAM_CLOSED',
  'FRAME_SIZE_ERROR', 'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR', 'CONNECT_ERROR', 'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY', 'HTTP_1_1_REQUIRED',
] as const;

/** An RFC 9113 error code name. */
export type H2ErrorName = (typeof ERROR_NAMES)[number];

/** The name of an error code; unknown codes (section 7: no special behaviour) as `0x` and their hex. */
export function errorName(code: number): string {
  return ERROR_NAMES[code] ?? `0x${code.toString(16)}`;
}

/** The value of an error code name, for the GOAWAY or RST_STREAM a caller sends. */
export function errorCode(name: H2ErrorName): number {
  return ERROR_NAMES.indexOf(name);
}

/** The client connection preface (section 3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** SETTINGS_MAX_FRAME_SIZE's initial value and smallest legal value (section 6.5.2). */
export const DEFAULT_MAX_FRAME_SIZE = 16384;

/** Setting identifiers this parser checks (section 6.5.2). */
export const SETTINGS = {
  HEADER_TABLE_SIZE: 1,
  ENABLE_PUSH: 2,
  MAX_CONCURRENT_STREAMS: 3,
  INITIAL_WINDOW_SIZE: 4,
  MAX_FRAME_SIZE: 5,
  MAX_HEADER_LIST_SIZE: 6,
} as const;

/** A connection error: the connection must be closed with GOAWAY(code) (section 5.4.1). */
export interface H2ConnectionError {
  /** The RFC 9113 error code name for the GOAWAY. */
  code: H2ErrorName;
  /** What was wrong, in a sentence. */
  message: string;
}

/** PRIORITY fields of a HEADERS or PRIORITY frame (RFC 9113 section 5.3.2, deprecated but still on the wire). */
export interface Priority {
  /** The E flag. */
  exclusive: boolean;
  /** The stream it depends on. */
  dependency: number;
  /** Weight as sent (0-255, meaning 1-256). */
  weight: number;
}

/** One frame, or one piece of a DATA frame, in wire order. `time` is when its chunk arrived (epoch ms). */
export type H2Frame =
  | {
      type: 'DATA'; streamId: number; time: number;
      /** Payload bytes that arrived in one chunk, padding left out: a subarray of that chunk. */
      data: Buffer;
      /** This piece ends its frame. */
      last: boolean;
      /** END_STREAM, on the frame's last piece only. */
      endStream: boolean;
    }
  | {
      type: 'HEADERS'; streamId: number; time: number; endStream: boolean; priority?: Priority;
      /** The whole header block: the fragments of the HEADERS and its CONTINUATIONs, padding left out. */
      block: Buffer;
      /** How many frames carried it (1 + CONTINUATIONs). */
      frames: number;
    }
  | { type: 'PRIORITY'; streamId: number; time: number; priority: Priority }
  | { type: 'RST_STREAM'; streamId: number; time: number; errorCode: number; error: string }
  | {
      type: 'SETTINGS'; time: number; ack: boolean;
      /** [identifier, value] in the order sent (section 6.5.3: processed in order). */
      settings: Array<[number, number]>;
    }
  | { type: 'PUSH_PROMISE'; streamId: number; time: number; promisedStreamId: number; block: Buffer; frames: number }
  | { type: 'PING'; time: number; ack: boolean; data: Buffer }
  | { type: 'GOAWAY'; time: number; lastStreamId: number; errorCode: number; error: string; debug: Buffer }
  | { type: 'WINDOW_UPDATE'; streamId: number; time: number; increment: number }
  | { type: 'UNKNOWN'; frameType: number; flags: number; streamId: number; time: number; length: number }
  | { type: 'STREAM_ERROR'; streamId: number; time: number; code: H2ErrorName; message: string };
