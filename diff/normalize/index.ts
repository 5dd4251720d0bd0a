// diff/normalize/'s face for the rest of diff/: what the stages use to turn
// a capture's entries into normalized entries.
export { normalizeContext, type NormalizeContext } from './context.js';
export { normalizeEntry } from './entry.js';
export { entryHost, entryKey, hostsInKeys, routeWithHost, routeWithoutHost } from './keys.js';
export { KEY_DETECTORS, keyedRequestLine, routeWithoutKey } from './route-keys.js';
export { pairedPageLabels } from './pages.js';
export { applyPathRules, applyPathRulesNoting, compilePathRules, type PathRules } from './path-rules.js';
export { bothErased, type ErasedNote } from './erased.js';
export { compileRules, homesFor, type RuleSet } from './rules.js';
export { BUILTIN_RULE_NAMES } from './builtin-rules.js';
export { bodyParsers, type BodyParser, type RawBody, type ParsedBody } from './bodies.js';
export { hasMarker, markersOf, OrdinalNumbering, OrdinalTable, unnumber } from './ordinals.js';
export { KeyedSlots, keyedClassIndices, keyedSlotsIn } from './keyed.js';
export { namedByWords } from './shapes.js';
export { ZipBodies } from './zip.js';
export { ProtoSchema } from '../../capture/index.js';
export { captureWindow, type CaptureWindow } from './timestamps.js';
