// inspect/: what `bb frames` and `bb show` list (pure model and text).
// Reads capture files only (`bb frames --follow` tails through capture/'s followJournal).
export {
  wsConnections, filterConnections, connectionMatches, messageMatches, entryRows, filterRows, timeline, OPCODE_NAMES,
  opcodeName, type FrameFilter, type EntryFilter,
} from './model.js';
export { framesText, timelineText, showText, messageLine, formatOffset, preview, type Style } from './format.js';
export { grpcAsMessage, isGrpcEntry, isSseEntry, sseAsMessage, sseMessages, messageKindOf, SeqPlacer } from './streams.js';
export { exchangeText, findExchange, isExchangeName } from './exchange.js';
export { framesDiagram, filterConnectionsByPage, filterTimelineByPage } from './frames-diagram.js';
export { framesHtml } from './frames-html.js';
export { laneLabels, laneLabelText } from './lanes.js';
export { FRAMES_SEARCH_SCRIPT } from './frames-search.js';
export { grpcShown, grpcSchemaAt, type ShownMessage, type GrpcSchemaOf } from './grpc-tree.js';
