// scenario/replay/'s face: re-drive the client side of a capture against another server, recording what happens.
export { replayCapture, prepareReplay, replayThrough, REPLAY_DEFAULTS } from './run.js';
export type { ReplayOptions, ReplaySummary, ReplayPace, PreparedReplay } from './run.js';
export type { Rewritten } from './correlate.js';
