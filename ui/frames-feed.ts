// The frames tab's feed: every WebSocket message of the running captures in
// bb's order, with the connection it belongs to, for a live picture of lanes
// (one per connection) like `bb frames --html` draws of a finished capture.
//
//   frames   {type:"captures", labels}, then {type:"connection", label, row} per
//            WebSocket connection and {type:"frame", label, exchange, frame} per
//            message so far (in `_bb.seq` order), then each new one as it is recorded
//
// A frame carries at most PREVIEW characters of its payload (the exchange's
// own view has it whole): a tab of 100,000 frames stays a few MB.
import type { HarWebSocketMessage, LiveCapture, LiveRow } from '../capture/index.js';
import type { UiEvent, UiFeed } from './server.js';
import type { LiveSource } from './capture-feed.js';

/** Payload characters a frame carries. */
const PREVIEW = 512;

/** One message as the frames tab lists it. */
interface Frame {
  /** Its `_bb.seq` (bb's order across connections). */
  seq: number;
  /** Epoch seconds. */
  time: number;
  /** send (client → server), receive, or error. */
  type: HarWebSocketMessage['type'];
  opcode: number;
  /** Text (cut to PREVIEW), base64 for binary as the HAR holds it (cut too). */
  data: string;
  /** The payload's length as the HAR holds it (characters, or base64 characters). */
  length: number;
  /** A close message's code and reason. */
  close?: { code?: number; reason?: string };
}

const frameOf = (m: HarWebSocketMessage): Frame => ({
  seq: m._bb?.seq ?? 0, time: m.time, type: m.type, opcode: m.opcode, data: m.data.slice(0, PREVIEW), length: m.data.length,
  ...(m.opcode === 8 ? { close: { code: m._bb?.code, reason: m._bb?.reason } } : {}),
});

/** The WebSocket connections of a live capture so far, and their messages in bb's order. */
function snapshot(label: string, live: LiveCapture): UiEvent[] {
  const connections = live.rows().filter((r) => r.kind === 'websocket');
  const frames = connections.flatMap((row) =>
    (live.entry(row.seq)?._webSocketMessages ?? []).map((m) => ({ type: 'frame', label, exchange: row.seq, frame: frameOf(m) })),
  );
  frames.sort((a, b) => a.frame.seq - b.frame.seq);
  return [...connections.map((row) => ({ type: 'connection', label, row })), ...frames];
}

/** The frames tab's feed over these recordings. */
export function framesFeed(sources: LiveSource[]): UiFeed {
  return {
    name: 'frames',
    open(_key, send) {
      send({ type: 'captures', labels: sources.map((s) => s.label) });
      for (const { label, live } of sources) for (const event of snapshot(label, live)) send(event);
      const stops = sources.map(({ label, live }) =>
        live.on((event) => {
          if (event.type === 'row' && event.row.kind === 'websocket') send({ type: 'connection', label, row: event.row satisfies LiveRow });
          if (event.type === 'message') send({ type: 'frame', label, exchange: event.seq, frame: frameOf(event.message) });
        }),
      );
      return () => stops.forEach((stop) => stop());
    },
  };
}
