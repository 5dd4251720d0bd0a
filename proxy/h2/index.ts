// The face of bb's passive h2 reading layer (RFC 9113 frames, RFC 7541 HPACK),
// for the h2 tap to build on: one H2Session per tapped connection, or the
// frame parser and HPACK decoder on their own.
export { H2Session, type H2Fact, type H2Side, type H2SessionOptions, type HeadersKind } from './session.js';
export { H2FrameParser, type H2FrameParserOptions } from './frames.js';
export {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  SETTINGS,
  errorCode,
  errorName,
  type H2ConnectionError,
  type H2ErrorName,
  type H2Frame,
  type Priority,
} from './frame-types.js';
export { goawayFrame, rstStreamFrame } from './write.js';
export { HpackDecoder, DEFAULT_HEADER_TABLE_SIZE, type DecodedHeaders, type HpackDecoderOptions, type HpackError } from './hpack.js';
