// diff/'s public face: compare two capture files, render the result.
import { createContext, type DiffOptions } from './context.js';
import { diffPipe, runStages } from './stages.js';
import type { DiffResult } from './types.js';

export { loadDiffConfig, onlyKeys, parseConfigJson, validateDiffConfig, loadConfigProtoSchema, configProtoSchema } from './config.js';
export type { DiffConfig, NormalizeConfig, PairingConfig, KnownConfig } from './config.js';
export type { DiffOptions, DiffStage, DiffContext, DiffProgress, StagePart } from './context.js';
export type { Pipe } from './pipe.js';
export type { BodyParser, RawBody, ParsedBody } from './normalize/index.js';
export type { TimingOptions, TimingReport } from './timing.js';
export type { DiffResult, Finding, Difference, Pair, StaleKnown, PairView, EntryView, NoiseHidden, RuleHidden } from './types.js';
export type { NotReplayed } from './not-replayed.js';
export { diffHars, type NamedHar } from './in-memory.js';
export { elidePair, plural, renderText, VALUE_WIDTH, type TextOptions } from './report/text.js';
export { renderJson } from './report/json.js';
export { renderHtml } from './report/html-lazy.js';
export type { HtmlOptions } from './report/html.js';
export type { ViewLimits } from './report/html-pair.js';
export { pairViewsFrom } from './report/html-views.js';
export { renderJunit, type JunitOptions } from './report/junit.js';
export { narrowestKnown, knownForFinding, findingOnRoutes, noiseRules } from './triage-rules.js';
export { addToConfigFile } from './config-edit.js';
export { ratifiedValuesText } from './ratified.js';
export { noAnswer, sortForComparison } from './order.js';
export { parseFieldPath } from './selector.js';
export { followsFromStatus, statusChangeText, statusRows } from './findings-fold.js';
export { byStatusPattern, findingHash, findingPattern, groupsAlone, idOfHash, rowSignature, splitsByStatus, varyingPart, varyingSignature, withStatus } from './findings.js';
export { BIND_DECODED_BYTES, BIND_READ_BYTES, ClientSends, Counterparts, grpcMessageBytes, grpcSentTokens, madeNotWord, messageValues, parseLooseJson, protoTokens, recordedResponse, requestTokens, responseValues, rewriteHeaderValue, rewriteProtoMessage, rewriteTarget, rewriteTokens, sentRequest, setCookiePair, pathTokens, streamMessageValues, textEncoding, tokensOf, type IssuedValue, type ResponseView, type ValueEncoding } from './bind/index.js';

/** Compares two capture files; throws a BbError (CaptureReadError) when either cannot be read or compared. */
export async function diffCaptures(oldPath: string, newPath: string, options: DiffOptions = {}): Promise<DiffResult> {
  // One stage list for every size: the read stage keeps big files in the bounded store (store/bounded.ts).
  const pipe = diffPipe();
  options.stages?.(pipe);
  return runStages(createContext(oldPath, newPath, options), pipe.list());
}
