// HAR 1.2 types with bb's extensions: the contract between capture/ (which
// writes) and diff/ (which reads). See docs/capture-format.md "What a capture holds".
// Fields starting with `_` are extensions; other producers' extensions are
// tolerated by readers and typed loosely here.
import type { EventStreamMessage } from '../core/index.js';

/** One header or query pair, in wire order. */
export interface HarNameValue {
  name: string;
  value: string;
  comment?: string;
}

/** A cookie as HAR lists it. */
export interface HarCookie {
  name: string;
  value: string;
  path?: string;
  domain?: string;
  expires?: string | null;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: string;
  comment?: string;
}

/** A request body. */
export interface HarPostData {
  mimeType: string;
  text?: string;
  params?: Array<{ name: string; value?: string; fileName?: string; contentType?: string }>;
  comment?: string;
  /** bb: "base64" when text holds base64 of binary bytes. */
  _encoding?: 'base64';
}

/** A response body. */
export interface HarContent {
  /** Decoded length in bytes. */
  size: number;
  /** size − bodySize; absent when unknown. */
  compression?: number;
  mimeType: string;
  text?: string;
  encoding?: 'base64' | string;
  comment?: string;
  /** bb: why text is raw bytes although content-encoded (e.g. "zstd: no decoder in Node 20"). */
  _bbUndecoded?: string;
}

export interface HarRequest {
  method: string;
  url: string;
  httpVersion: string;
  cookies: HarCookie[];
  headers: HarNameValue[];
  queryString: HarNameValue[];
  postData?: HarPostData;
  headersSize: number;
  bodySize: number;
  comment?: string;
  /** bb: request trailers as received, in order. */
  _trailers?: HarNameValue[];
}

export interface HarResponse {
  status: number;
  statusText: string;
  httpVersion: string;
  cookies: HarCookie[];
  headers: HarNameValue[];
  content: HarContent;
  redirectURL: string;
  headersSize: number;
  bodySize: number;
  comment?: string;
  /** bb: trailers as received, in order. */
  _trailers?: HarNameValue[];
  /** bb: the informational (1xx) heads that came before this one (100 Continue, 103 Early Hints), in order. */
  _informational?: HarInformational[];
}

/** An informational (1xx) response head, as received. */
export interface HarInformational {
  status: number;
  statusText: string;
  headers: HarNameValue[];
}

export interface HarTimings {
  blocked?: number;
  dns?: number;
  connect?: number;
  send: number;
  wait: number;
  receive: number;
  ssl?: number;
  comment?: string;
}

/** bb's facts about an exchange. */
export interface BbEntryExt {
  /** Counter value when the request arrived (shared with WS messages of the same capture). */
  seq: number;
  /** Counter value when the exchange completed. */
  seqEnd?: number;
  /**
   * When the request's head arrived, epoch ms with its fraction (µs): `startedDateTime` is this cut to the
   * millisecond, where a WebSocket, event or gRPC message's `time` keeps its fraction. Binding orders a request
   * against a stream's messages by it (capture/entry-times.ts entryStartMs).
   */
  started?: number;
  /** Set when the upstream failed; the response is then bb's own. */
  error?: { code: string; message: string; phase: string };
  /** Set when a side hung up mid-exchange. */
  aborted?: 'client' | 'upstream';
  /** Bytes recorded when a body went past the cap. */
  truncated?: { request?: number; response?: number };
  /** With `truncated`: the hash of each cut body's bytes past the cap, `sha256:HEX` or, redacted, `hmac-sha256:KEYID:HEX` (docs/capture-format.md). */
  restHash?: { request?: string; response?: string };
  /**
   * gRPC and event streams: whole messages (events) of a direction's recorded body past the MESSAGES_LISTED listed
   * in `_grpcMessages` / `_eventSourceMessages` (capture/options.ts); they are in the body's bytes.
   */
  unlisted?: { request?: number; response?: number };
  /**
   * WebSocket: with `unlisted`, a hash of each direction's messages past the list (opcodes and payloads in order),
   * `sha256:HEX` or, redacted, `hmac-sha256:KEYID:HEX` as rest hashes are (capture/ws-unlisted.ts).
   */
  unlistedHash?: { request?: string; response?: string };
  /** WebSocket: how the connection ended. */
  close?: { code: number | null; reason: string; by: 'client' | 'server' | 'none'; time: number | null };
  /** WebSocket: negotiated extensions, from the 101 (e.g. { "permessage-deflate": { ... } }). */
  extensions?: Record<string, unknown>;
  /** Raw request-target when it is not derivable from url (forward mode, odd targets). */
  target?: string;
  /** Set for tunnels that were not intercepted. */
  tunnel?: { host: string; port: number; bytesUp: number; bytesDown: number };
  /** The exchange had not ended when the capture closed (or crashed). */
  inFlight?: boolean;
  /** Refused packets: base64 of the bytes Node's parser refused. */
  rawPacket?: string;
  /** gRPC calls: grpc-status (null when no trailers came) and grpc-message, percent-decoded. */
  grpc?: { status: number | null; message?: string };
  /** HTTP/2: the stream id. */
  stream?: number;
  /** HTTP/2: the stream whose PUSH_PROMISE made this entry. */
  pushed?: number;
  /** HTTP/2: the RST_STREAM error code's name that ended the stream ("CANCEL"); for a reset burst, its most frequent. */
  reset?: string;
  /** HTTP/2: this entry stands for a burst of streams reset before any response (a rapid-reset flood), not for one stream. */
  resetBurst?: HarResetBurst;
  /** `bb shadow`: the exchange's id shared by the primary's, the candidate's and the secondary's captures (docs/shadow.md "The captures"). */
  shadow?: HarShadow;
}

/** What `bb shadow` wrote on an entry: its shared id, and why it was not compared. */
export interface HarShadow {
  /** The primary's `_bb.seq` of the exchange: the same id in all three captures, and their comparison order. */
  id: number;
  /** On a primary entry: why it was mirrored to no target ("unsafe", "sampled out", "too large", "queue full"); `bb diff` leaves it out. */
  skipped?: string;
}

/** A burst of h2 streams reset before any response, summed in one entry (docs/capture-format.md "HTTP/2 and gRPC entries"). */
export interface HarResetBurst {
  /** How many streams the entry stands for. */
  count: number;
  /** Their stream ids, as inclusive [first, last] ranges of ids two apart (a client's streams are odd). */
  streams: Array<[number, number]>;
  /** When the last of them was reset; the entry's startedDateTime is when the first opened. */
  endedDateTime: string;
  /** How many streams each side reset with each RST_STREAM code, most first. */
  resets: Array<{ by: 'client' | 'upstream'; code: string; count: number }>;
}

/** One gRPC (or gRPC-Web) length-prefixed message (docs/capture-format.md "HTTP/2 and gRPC entries"). */
export interface HarGrpcMessage {
  type: 'send' | 'receive';
  /** Epoch seconds (float): when its last byte was recorded. */
  time: number;
  /** The compressed flag of its prefix. */
  compressed: boolean;
  /** base64 of the message, decompressed when grpc-encoding is gzip or deflate. */
  data: string;
  _bb?: {
    /** Capture order, taken when the message's last byte crossed (absent for a cut message and gRPC-Web-text). */
    seq?: number;
    /** Bytes recorded of a message cut short (body cap, hang-up); its declared length is `length`. */
    truncated?: number;
    /** The length its prefix declared. */
    length?: number;
    /** Why a compressed message stays compressed (unknown grpc-encoding, does not inflate). */
    undecoded?: string;
  };
}

/** One WebSocket message, in Chrome's shape plus `_bb`. */
export interface HarWebSocketMessage {
  type: 'send' | 'receive' | 'error';
  /** Epoch seconds (float). Playwright writes epoch milliseconds; readers accept both. */
  time: number;
  opcode: number;
  data: string;
  _bb?: {
    seq: number;
    page?: string;
    frames?: number;
    compressed?: boolean;
    /** close (8): decoded code and reason. */
    code?: number;
    reason?: string;
    /** error rows: what went wrong. */
    error?: string;
    /** error rows: which direction stopped being parsed. */
    direction?: 'send' | 'receive';
    /** Payload bytes recorded when the message went past the body cap. */
    truncated?: number;
    /** With `truncated`: the whole message's payload bytes (inflated when it was compressed). */
    size?: number;
    /** With `truncated`: the hash of the payload bytes past the kept ones (as BbEntryExt.restHash). */
    restHash?: string;
  };
}

/** A server-sent event as it arrived. */
export type HarEventSourceMessage = EventStreamMessage;

export interface HarEntry {
  pageref?: string;
  startedDateTime: string;
  time: number;
  request: HarRequest;
  response: HarResponse;
  cache: Record<string, unknown>;
  timings: HarTimings;
  serverIPAddress?: string;
  connection?: string;
  comment?: string;
  _resourceType?: string;
  _webSocketMessages?: HarWebSocketMessage[];
  _eventSourceMessages?: HarEventSourceMessage[];
  _grpcMessages?: HarGrpcMessage[];
  _bb?: BbEntryExt;
  [extension: `_${string}`]: unknown;
}

export interface HarPage {
  startedDateTime: string;
  id: string;
  title: string;
  pageTimings: { onContentLoad?: number; onLoad?: number; comment?: string };
  comment?: string;
}

/** Why replay did not send an entry: another origin, a tunnel, a packet bb could not parse, a URL that is not http(s). */
export type ReplaySkipReason = 'origin' | 'tunnel' | 'unparsed' | 'url';

/** One entry of the replayed capture that replay did not send. */
export interface HarReplaySkip {
  /** Its index in the replayed capture's log.entries. */
  index: number;
  /** Its `_bb.seq` there, when it had one. */
  seq?: number;
  /** Its identity (replay-of.ts entryIdentity): a hash, so no URL of it is copied into the new capture. */
  id: string;
  /** Its origin, for `reason: "origin"`. */
  origin?: string;
  /** Why it was not sent. */
  reason: ReplaySkipReason;
}

/** log._bb.replayOf: the replayed capture's size and first entry, and the entries not sent. */
export interface HarReplayOf {
  /** How many entries the replayed capture holds. */
  entries: number;
  /** The identity of its first entry (replay-of.ts entryIdentity). */
  first: string;
  /** Its entries replay did not send, in its capture order. */
  skipped: HarReplaySkip[];
}

/** bb's facts about the whole capture. */
export interface BbLogExt {
  format: 1;
  label: string;
  /** The upstream origin (reverse mode) or "forward". */
  target: string;
  /** The proxy's own URL. */
  listen: string;
  startedDateTime: string;
  endedDateTime: string;
  /** false when recovered from a journal after a crash. */
  complete: boolean;
  counts: { entries: number; webSocketMessages: number };
  /** The server's HOME, set by `bb compare`; feeds the <HOME> placeholder. */
  serverHome?: string;
  /** Set by `bb recover`: torn records dropped. */
  recovered?: { droppedRecords: number; openExchanges: number };
  /** Whether values were redacted at capture time. */
  redacted?: boolean;
  /** Set by `bb replay`: the capture it replayed, and which of its entries it did not send (replay-of.ts). */
  replayOf?: HarReplayOf;
  /** Request headers bb itself set on this capture's requests, lower case (`bb shadow --header`): bb's choice, never compared. */
  setHeaders?: string[];
  /** Set by `bb shadow`: which of its run's captures this is (`bb diff` knows a shadow's captures by it, whatever their first entry). */
  shadowRole?: ShadowRole;
}

/** The three captures of a `bb shadow` run. */
export type ShadowRole = 'primary' | 'candidate' | 'secondary';

/** Whether a value is a ShadowRole (a log read from a file). */
export const isShadowRole = (v: unknown): v is ShadowRole => v === 'primary' || v === 'candidate' || v === 'secondary';

export interface HarLog {
  version: string;
  creator: { name: string; version: string; comment?: string };
  browser?: { name: string; version: string };
  pages?: HarPage[];
  entries: HarEntry[];
  comment?: string;
  _bb?: BbLogExt;
}

export interface Har {
  log: HarLog;
}

/** The version string bb writes in creator.version. */
export const BB_HAR_FORMAT = 1;
