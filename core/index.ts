// core/: layer 0 of bb. Only node: imports, no I/O; every other folder may import it.
export { globMatcher } from './glob.js';
export { isLoopbackHost, namesOwnAddress } from './hosts.js';
export { foreignRequestReason } from './local-request.js';
export { canonical } from './canonical.js';
export { EventStreamParser, type EventStreamMessage } from './event-stream.js';
export { BbError, isBbError, listenFailureWhy, oneLine, unreadableWhy, type BbErrorOptions } from './errors.js';
export { ERROR_CODES, FAILURE_CODES, type BbCode, type FailureCode } from './codes.js';
export { bbHomeFrom, type BbHome } from './home.js';
export { mediaType, isJsonMedia, isJsonLinesMedia, isEventStreamMedia, isTextMedia, isFormMedia, isZipMedia, isBinaryMedia, isTextualMedia } from './media-type.js';
export { headerPairs, headerValue, headerValues, pairValue, pairValues, serializeHead } from './raw-headers.js';
export { now, isoToSeconds, toEpochSeconds, type EpochMs } from './clock.js';
export { mulberry32 } from './random.js';
export { appendAll, indexInAscending } from './arrays.js';
export { esc, pageHead, scriptJson } from './html.js';
export { getOwn, setOwn } from './own-keys.js';
export { startModuleWorker } from './worker.js';
export { nearest } from './nearest.js';
export { lazyModule } from './lazy-module.js';
