// The face of bb's passive h2 reading layer (RFC 9113 frames, RFC 7541 HPACK),
// for the h2 tap to build on: one H2Session per tapped connection, and the
// GOAWAY frame the tap writes when a connection must end.
export { H2Session, type H2Fact, type H2Side } from './session.js';
export type { H2ConnectionError, H2ErrorName } from './frame-types.js';
export { goawayFrame } from './write.js';
