// diff/bind/'s face: issued values (what a server issued, where, and which
// ones a capture's client sent back), for the diff's normalizing and for
// `bb replay`'s correlation, and a target's counterparts of them for
// `bb shadow`. One module decides what counts as issued.
export { boundAlike, boundExcept, boundSet, IssuedTimeline, type BoundSet, ISSUED_CLASS, markIssued, boundAbsent, readPrimarySends, type PrimarySends } from './bound.js';
export { ClientSends, Counterparts } from './counterparts.js';
export { BIND_DECODED_BYTES, BIND_READ_BYTES, grpcMessageBytes, grpcSentTokens, madeNotWord, messageValues, parseLooseJson, protoTokens, recordedResponse, requestTokens, responseValues, rewriteHeaderValue, rewriteProtoMessage, rewriteTarget, rewriteTokens, sentRequest, setCookiePair, pathTokens, streamMessageValues, textEncoding, tokensOf, type IssuedValue, type ResponseView, type ValueEncoding } from './issued.js';
