// diff/bind/'s face: issued values (what a server issued, where, and which
// ones a capture's client sent back), for the diff's normalizing and for
// `bb replay`'s correlation. One module decides what counts as issued.
export { boundValues, IssuedTimeline, ISSUED_CLASS, markIssued, boundAbsent } from './bound.js';
export { messageValues, parseLooseJson, recordedResponse, requestTokens, responseValues, rewriteTokens, sameIssued, setCookiePair, tokensOf, type IssuedValue, type ResponseView } from './issued.js';
