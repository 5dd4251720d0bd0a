// capture/'s public face: record proxy facts into HAR files, recover after a
// crash, redact secrets, read any HAR (the types of the format are har.ts).
export { openCapture, redactorFor } from './capture.js';
export { DEFAULT_BODY_CAP, DEFAULT_WS_BUDGET, MAX_RECORDED_CAP, MESSAGES_LISTED, journalPaths, type CapturePaths } from './options.js';
export type { Capture, CaptureOptions, CaptureStats } from './capture.js';
export { recoverCapture } from './recover.js';
export { liveJournalWriter } from './journal-owner.js';
export { openSegmentedCapture, segmentPath, type RotateSpec, type SegmentedCapture, type SegmentedCaptureOptions } from './segments.js';
export type { RecoverOptions, RecoverResult } from './recover.js';
export type { WriteProgress } from './writer.js';
export { parseRedactSpecs, PLACEHOLDER_SOURCE, Redactor } from './redact.js';
export { loadRedactKey } from './redact-key.js';
export { multipartBoundary } from './redact-raw.js';
export type { RedactConfig } from './redact.js';
export {
  readCapture, checkCapture, streamCapture, indexCapture, CaptureReadError,
  type ReadCaptureOptions, type CaptureErrorCode, type CaptureStream, type IndexedCapture, type HarLogHeader,
} from './reader.js';
export type {
  Har, HarLog, HarPage, HarEntry, HarRequest, HarResponse, HarTimings, HarNameValue, HarCookie, HarPostData, HarContent,
  HarWebSocketMessage, HarEventSourceMessage, HarGrpcMessage, HarInformational, BbLogExt, BbEntryExt, HarShadow, HarReplayOf, HarReplaySkip, ShadowRole,
} from './har.js';
export { entryIdentity, replayOfShape, claimedIndices, replaySkipsIn } from './replay-of.js';
export { GrpcFrames, grpcMedia, grpcMessagesPast, type GrpcMedia, grpcMessageFeed, grpcStatus, grpcStatusName, GrpcMessageCounter, inflateGrpcMessage, splitGrpcBody } from './grpc.js';
export { followJournal, type FollowedEvent } from './journal-follow.js';
export { decodeContent, utf8Text } from './body.js';
export { isEventStreamEntry, isH2OrLater, isH2WebSocketEntry, isWebSocketEntry, sseEventsOf } from './har-entry.js';
export { entryStartMs, exchangeEndMs, messageEpochMs } from './entry-times.js';
export { restHashScheme } from './rest-hash.js';
export { checkOutPathInFolder, makeOutFolder, writeOutFile } from './out-file.js';
export { followEntries, type WholeEntry } from './entry-follow.js';
export type { EventFollower, LiveCapture, LiveEvent, LiveLimits, LivePage, LiveRow, LiveState, RecentMessage } from './live.js';
export { LIVE_ROWS, LiveCaptureClosed } from './live.js';
export { decodeProtobuf, protoFields, rewriteProtobuf, type ProtoField } from './protobuf.js';
export { ProtoSchema } from './proto-schema.js';
