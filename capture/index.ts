// capture/'s public face: record proxy facts into HAR files, recover after a
// crash, redact secrets, read any HAR (the types of the format are har.ts).
export { openCapture, redactorFor } from './capture.js';
export { DEFAULT_BODY_CAP, journalPaths, type CapturePaths } from './options.js';
export type { Capture, CaptureOptions, CaptureStats } from './capture.js';
export { recoverCapture } from './recover.js';
export type { RecoverOptions, RecoverResult } from './recover.js';
export type { WriteProgress } from './writer.js';
export {
  loadRedactKey, parseRedactSpecs, Redactor, DEFAULT_REDACTED_HEADERS, DEFAULT_REDACTED_KEYS, REDACT_KEY_FILE,
} from './redact.js';
export type { RedactConfig } from './redact.js';
export { parseJournalLine, JOURNAL_VERSION } from './journal.js';
export { buildWsMessage as webSocketMessageFromRecord } from './to-har.js';
export type { HeaderRecord, JournalRecord, StartRecord, WsMessageRecord, WsErrorRecord, BodySlice } from './journal.js';
export {
  readCapture, streamCapture, indexCapture, toEpochSeconds, CaptureReadError,
  type ReadCaptureOptions, type CaptureErrorCode, type CaptureStream, type IndexedCapture, type HarLogHeader,
} from './reader.js';
export type * from './har.js';
export { grpcStatus, grpcMedia, type GrpcMedia } from './grpc.js';
export { followJournal, type FollowedEvent, type FollowOptions, type FollowEnd } from './journal-follow.js';
export { decodeContent, type DecodedBody } from './body.js';
