// scenario/replay/'s face: re-drive the client side of a capture against another server, recording what happens.
export { replayCapture, prepareReplay, replayThrough, REPLAY_DEFAULTS } from './run.js';
export type { ReplayOptions, ReplaySummary, ReplayPace, PreparedReplay } from './run.js';
export type { Rewritten } from './correlate.js';
// bb's own head writer and HTTP/1.1 connection, and the live response view: bb shadow's mirrors send with them too.
export { LaneConnection, type ExchangeOutcome } from './connection.js';
export { bodyBytes, liveResponse, withHeaders, wireRequest, WIRE_HEADERS, WS_OWN_HEADERS, type RequestParts } from './request.js';
// Replay's h2c session and h2 fields: bb shadow mirrors HTTP/2 exchanges and gRPC calls with them.
export { H2Connection, h2Fields, type H2Request } from './h2.js';
export { frameMessage } from './grpc.js';
