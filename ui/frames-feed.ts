// The frames tab's feed: every message of the running captures' streams in
// bb's order (WebSocket messages, SSE events, gRPC messages both ways), with
// the stream it belongs to, for a live picture of lanes (one per connection,
// event stream or gRPC call) like `bb frames --html` draws of a finished capture.
//
//   frames   {type:"captures", labels}, then {type:"connection", label, row, text}
//            per stream (again when its row or its label `text` changes) and
//            {type:"frame", label, exchange, frame} per message so far (in
//            bb's order), then each new one as it is recorded
//
// The messages are `bb frames`'s model (inspect/: sseAsMessage, grpcAsMessage,
// lane labels, SeqPlacer for an SSE event's place among numbered records).
// WebSocket messages come one by one from the live capture; SSE events and
// gRPC messages live in their exchange's body, so a stream whose row changed
// is read again (at most every PULL_EVERY_MS) and its new messages sent.
//
// A frame carries at most PREVIEW characters of its payload (the exchange's
// own view has it whole): a tab of 100,000 frames stays a few MB.
import type { HarWebSocketMessage, LiveCapture, LiveRow, ProtoSchema } from '../capture/index.js';
import {
  grpcAsMessage, grpcSchemaAt, type GrpcSchemaOf, isGrpcEntry, isSseEntry, laneLabels, laneLabelText, messageKindOf, opcodeName, preview, SeqPlacer, sseAsMessage,
} from '../inspect/index.js';
import type { UiEvent, UiFeed } from './server.js';
import type { LiveSource } from './capture-feed.js';

/** Payload characters a frame carries. */
const PREVIEW = 512;
/** How often a stream whose body grows is read for new messages, at most. */
const PULL_EVERY_MS = 100;
/** How long lane labels wait for more lanes and first messages before they are worked out again. */
const RELABEL_AFTER_MS = 50;
/** Messages a lane keeps for its label (lanes.ts compares no more). */
const LABEL_MESSAGES = 20;

/** One message as the frames tab lists it. */
interface Frame {
  /** Its `_bb.seq` (bb's order across streams); an SSE event's is a position placed among them. */
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
  /** "sse" or "grpc" for a stream's message (absent: a WebSocket message). */
  kind?: string;
  /** A stream message's line as `bb frames` previews it (event name and id, binary as hex), cut to PREVIEW. */
  text?: string;
  /** A gRPC message's printable runs, for the search. */
  strings?: string;
}

/** A message as a frame; `schemaOf` names a gRPC message's fields (its call's method in the run's .proto files). */
const frameOf = (m: HarWebSocketMessage, seq = m._bb?.seq ?? 0, schemaOf?: GrpcSchemaOf): Frame => {
  const frame: Frame = { seq, time: m.time, type: m.type, opcode: m.opcode, data: m.data.slice(0, PREVIEW), length: m.data.length };
  if (m.opcode === 8) frame.close = { code: m._bb?.code, reason: m._bb?.reason };
  const kind = messageKindOf(m, opcodeName);
  if (kind === 'sse' || kind === 'grpc') {
    frame.kind = kind;
    frame.text = preview(m, schemaOf).slice(0, PREVIEW);
    if (kind === 'grpc') frame.strings = (Buffer.from(m.data, 'base64').toString('latin1').match(/[\x20-\x7e]{3,}/g) ?? []).join(' ').slice(0, PREVIEW);
  }
  return frame;
};

/** True for the rows the tab draws a lane of. */
const isLane = (row: LiveRow): boolean => row.kind === 'websocket' || row.kind === 'sse' || row.kind === 'grpc';

/** What a lane is called before its label: `bb frames`'s names (a WebSocket connection by its exchange). */
const laneName = (row: LiveRow): string => (row.kind === 'sse' ? `sse stream #${row.seq}` : row.kind === 'grpc' ? `grpc call #${row.seq}` : `#${row.seq}`);

/** One recording's streams as one subscriber of the tab has been told them. */
class SourceFrames {
  private readonly lanes = new Map<number, { row: LiveRow; messages: HarWebSocketMessage[]; text: string }>();
  /** Stream messages sent so far, per exchange and direction. */
  private readonly pulled = new Map<number, { send: number; receive: number }>();
  private readonly pulls = new Map<number, NodeJS.Timeout>();
  private relabelTimer: NodeJS.Timeout | undefined;
  private readonly placer = new SeqPlacer([]);

  constructor(
    private readonly label: string,
    private readonly live: LiveCapture,
    private readonly send: (event: UiEvent) => void,
    private readonly proto?: ProtoSchema,
  ) {}

  /** Everything so far, frames in bb's order; lanes labelled at once. */
  snapshot(): void {
    const rows = this.live.rows();
    const frames: Array<{ exchange: number; frame: Frame }> = [];
    const emit = (exchange: number, frame: Frame): void => void frames.push({ exchange, frame });
    // Every numbered record known, in seq order, before any event is placed among them; lanes in the order their exchanges began.
    const ws = new Map(rows.filter((r) => r.kind === 'websocket').map((r) => [r.seq, this.live.entry(r.seq)?._webSocketMessages ?? []]));
    const anchors = rows.map((r) => ({ seq: r.seq, time: r.startedAt / 1000 }));
    for (const messages of ws.values()) for (const m of messages) if (m._bb?.seq !== undefined) anchors.push({ seq: m._bb.seq, time: m.time });
    for (const a of anchors.sort((x, y) => x.seq - y.seq)) this.placer.add(a.seq, a.time);
    for (const row of rows) if (isLane(row)) this.lanes.set(row.seq, { row, messages: [], text: '' });
    for (const [seq, messages] of ws) for (const m of messages) this.message(seq, m, emit);
    for (const row of rows) if (row.kind === 'sse' || row.kind === 'grpc') this.pull(row.seq, emit);
    this.relabel(false);
    for (const lane of this.lanes.values()) this.send({ type: 'connection', label: this.label, row: lane.row, text: lane.text });
    frames.sort((a, b) => a.frame.seq - b.frame.seq);
    for (const { exchange, frame } of frames) this.send({ type: 'frame', label: this.label, exchange, frame });
  }

  /** One event of the live capture. */
  onEvent(event: Parameters<Parameters<LiveCapture['on']>[0]>[0]): void {
    const emit = (exchange: number, frame: Frame): void => this.send({ type: 'frame', label: this.label, exchange, frame });
    if (event.type === 'message') return this.message(event.seq, event.message, emit);
    if (event.type !== 'row') return;
    const row = event.row;
    this.placer.add(row.seq, row.startedAt / 1000);
    if (!isLane(row)) return;
    const lane = this.lanes.get(row.seq);
    if (lane) lane.row = row;
    else {
      // A new lane is named at once; its label's difference from the others follows (relabel).
      this.lanes.set(row.seq, { row, messages: [], text: this.textOf(row, laneLabels([{ url: row.url, messages: [] }])[0]!) });
      this.scheduleRelabel();
    }
    this.send({ type: 'connection', label: this.label, row, text: this.lanes.get(row.seq)!.text });
    if (row.kind !== 'websocket' && !this.pulls.has(row.seq)) {
      this.pulls.set(row.seq, setTimeout(() => {
        this.pulls.delete(row.seq);
        this.pull(row.seq, emit);
      }, PULL_EVERY_MS));
    }
  }

  /** Stops the timers. */
  close(): void {
    for (const timer of this.pulls.values()) clearTimeout(timer);
    if (this.relabelTimer) clearTimeout(this.relabelTimer);
  }

  private message(exchange: number, m: HarWebSocketMessage, emit: (exchange: number, frame: Frame) => void, url?: string): void {
    const seq = m._bb?.seq;
    if (seq !== undefined) this.placer.add(seq, m.time);
    const lane = this.lanes.get(exchange);
    if (lane && lane.messages.length < LABEL_MESSAGES) {
      lane.messages.push(m);
      this.scheduleRelabel();
    }
    emit(exchange, frameOf(m, seq ?? this.placer.place(m.time, exchange), grpcSchemaAt(this.proto, url)));
  }

  // An SSE stream's or gRPC call's messages not sent yet; a gRPC message still cut short waits for its end.
  private pull(exchange: number, emit: (exchange: number, frame: Frame) => void): void {
    const entry = this.live.entry(exchange);
    if (!entry) return;
    const sse = isSseEntry(entry);
    const messages = sse ? entry._eventSourceMessages!.map(sseAsMessage) : isGrpcEntry(entry) ? entry._grpcMessages!.map(grpcAsMessage) : [];
    const sent = this.pulled.get(exchange) ?? { send: 0, receive: 0 };
    this.pulled.set(exchange, sent);
    const seen = { send: 0, receive: 0 };
    for (const m of messages) {
      if (m.type === 'error') continue;
      if (seen[m.type]++ < sent[m.type]) continue;
      if (entry._bb?.inFlight && (m._bb as { truncated?: number } | undefined)?.truncated !== undefined) break;
      sent[m.type]++;
      this.message(exchange, m, emit, entry.request.url);
    }
  }

  private scheduleRelabel(): void {
    this.relabelTimer ??= setTimeout(() => {
      this.relabelTimer = undefined;
      this.relabel(true);
    }, RELABEL_AFTER_MS);
  }

  // `bb frames`'s labels over every lane of this recording; a lane whose label changed is told again.
  private relabel(tell: boolean): void {
    const lanes = [...this.lanes.values()];
    const labels = laneLabels(lanes.map((l) => ({ url: l.row.url, messages: l.messages })), this.proto);
    lanes.forEach((lane, i) => {
      const text = this.textOf(lane.row, labels[i]!);
      if (text === lane.text) return;
      lane.text = text;
      if (tell) this.send({ type: 'connection', label: this.label, row: lane.row, text });
    });
  }

  private textOf(row: LiveRow, label: Parameters<typeof laneLabelText>[0]): string {
    return `${laneName(row)} ${laneLabelText(label)}`;
  }
}

/** The frames tab's feed over these recordings. */
export function framesFeed(sources: LiveSource[]): UiFeed {
  return {
    name: 'frames',
    open(_key, send) {
      send({ type: 'captures', labels: sources.map((s) => s.label) });
      const states = sources.map(({ label, live, proto }) => new SourceFrames(label, live, send, proto));
      states.forEach((s) => s.snapshot());
      const stops = sources.map(({ live }, i) => live.on((event) => states[i]!.onEvent(event)));
      return () => {
        stops.forEach((stop) => stop());
        states.forEach((s) => s.close());
      };
    },
  };
}
