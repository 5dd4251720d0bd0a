// capture/'s public face: record proxy facts into HAR files, recover after a
// crash, redact secrets. (The HAR reader lives in reader.ts.)
export { openCapture, journalPaths, redactorFor, DEFAULT_BODY_CAP } from './capture.js';
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
export type { HeaderRecord, JournalRecord, WsMessageRecord, WsErrorRecord, BodySlice } from './journal.js';
