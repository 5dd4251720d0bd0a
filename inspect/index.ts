// inspect/: what `bb frames` and `bb show` list (pure model and text).
// Reads capture files only (`bb frames --follow` tails through capture/'s followJournal).
export {
  wsConnections, filterConnections, connectionMatches, messageMatches, entryRows, filterRows, timeline,
  opcodeName, payloadText, payloadBytes, statusMatches, isWebSocketEntry, isoToSeconds, OPCODE_NAMES,
  type WsConnectionView, type EntryRow, type TimelineEvent, type FrameFilter, type EntryFilter,
} from './model.js';
export {
  framesText, timelineText, showText, messageLine, preview, escapeControls, formatSize, formatOffset, clip, type Style,
} from './format.js';
export { exchangeText, bodyLines, findExchange, isExchangeName, exchangeNumber } from './exchange.js';
export {
  framesDiagram, filterConnectionsByPage, filterTimelineByPage,
  type FramesDiagram, type DiagramLane, type DiagramRow, type DiagramBand, type DiagramPayload, type DiagramOptions,
} from './frames-diagram.js';
export { framesHtml, type FramesHtmlOptions } from './frames-html.js';
