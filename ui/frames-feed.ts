// The frames tab's feed: the running captures' stream messages in bb's order
// (WebSocket messages, SSE events, gRPC messages both ways), with the stream
// each belongs to, for a live picture of lanes (one per connection, event
// stream or gRPC call) like `bb frames --html` draws of a finished capture.
//
//   frames   {type:"captures", labels}, then {type:"connection", label, row, text}
//            per stream (again when its row or its label `text` changes),
//            {type:"frame", label, exchange, frame} per message of the window
//            (in bb's order), {type:"window", limit, cut} when the capture
//            holds more than the window shows, then each new message as it
//            is recorded
//
// The messages are `bb frames`'s model (inspect/: sseAsMessage, grpcAsMessage,
// lane labels, SeqPlacer for an SSE event's place among numbered records).
// WebSocket messages come one by one from the live capture; SSE events and
// gRPC messages live in their exchange's body, so the streams whose rows
// changed are read again in rounds, at most every PULL_EVERY_MS: an event
// stream the live capture can follow (LiveCapture.followEvents: uncoded) from
// where the last read stopped, any other from its entry, which costs as much
// as the stream is long, so rounds are paced by their cost (paced.ts):
// the relay's thread spends at most about a tenth of its time on a tab (a
// 50,000-event stream read every 100 ms took it from 4 % to 36 % of a core,
// docs/performance.md "ui").
//
// Bounded by the window, not the capture: opening the tab sends the last
// FRAMES_SHOWN messages of the capture (WebSocket ones read back by their
// journal lines, LiveCapture.recentMessages; the latest streams' messages),
// not all (1,000,000 messages took 3.6 s of the relay's thread and 400 MB),
// and the page keeps as many (`bb frames` on the HAR lists them all). A frame
// carries at most PREVIEW characters of its payload (the exchange's own view
// has it whole).
import { PacedRuns } from './paced.js';
import { steppedSnapshot } from './stepped.js';
import { type EventFollower, type HarWebSocketMessage, type LiveCapture, type LiveEvent, type LiveRow, type ProtoSchema } from '../capture/index.js';
import {
  grpcAsMessage, grpcSchemaAt, type GrpcSchemaOf, isGrpcEntry, isSseEntry, laneLabels, laneLabelText, messageKindOf, opcodeName, preview, SeqPlacer, sseAsMessage, sseMessages,
} from '../inspect/index.js';
import type { UiEvent, UiFeed } from './server.js';
import type { LiveSource } from './capture-feed.js';

/** Payload characters a frame carries. */
const PREVIEW = 512;
/** Messages a snapshot sends at most: the latest of the capture (the page keeps as many: assets/views/frames.js). */
export const FRAMES_SHOWN = 50_000;
/** How often the streams whose bodies grow are read for new messages, at most (and paced by the reads' cost: paced.ts). */
const PULL_EVERY_MS = 100;
/** Numbered records the placer keeps to place a stream's message among (the latest; an older time goes before them). */
const PLACER_KEEP = 4 * FRAMES_SHOWN;
/** How long lane labels wait for more lanes and first messages before they are worked out again. */
const RELABEL_AFTER_MS = 50;
/**
 * Ended lanes labelled again as new ones come, the latest (open ones always are): labels are worked out over every
 * lane kept, and a client opening a connection per message made that pass grow with the run (16,000 connections:
 * stalls of 86 ms). An older ended lane keeps the label it was last told.
 */
const ENDED_LANES_LABELLED = 256;
/** Streams the feed remembers reading (and having read to their end), at most: the oldest ended ones go first. */
const FOLLOWED_KEPT = 10_000;
/** Messages a lane keeps for its label (lanes.ts compares no more). */
const LABEL_MESSAGES = 20;
/** Messages built between the snapshot's steps. */
const SNAPSHOT_STEP = 500;

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
    if (kind === 'grpc') frame.strings = (Buffer.from(m.data, 'base64').toString('latin1').match(/[\x20-\x7e]{3}[\x20-\x7e]*/g) ?? []).join(' ').slice(0, PREVIEW);
  }
  return frame;
};

/** Whether a stream is still going (its lane can get messages). */
const going = (row: LiveRow): boolean => row.endedAt === undefined && row.state !== 'closed';

/** What the page draws of a lane's row (assets/views/frames.js laneLabel): its kind and whether it ended. */
const laneShows = (row: LiveRow): string => `${row.kind} ${row.kind === 'websocket' ? row.state === 'closed' : row.endedAt !== undefined}`;

/** True for the rows the tab draws a lane of. */
const isLane = (row: LiveRow): boolean => row.kind === 'websocket' || row.kind === 'sse' || row.kind === 'grpc';

/** What a lane is called before its label: `bb frames`'s names (a WebSocket connection by its exchange). */
const laneName = (row: LiveRow): string => (row.kind === 'sse' ? `sse stream #${row.seq}` : row.kind === 'grpc' ? `grpc call #${row.seq}` : `#${row.seq}`);

/** One recording's streams as one subscriber of the tab has been told them. */
class SourceFrames {
  /** Per lane: its row as last told, the messages its label reads, its label, and what the page shows of its row (laneShows). */
  private readonly lanes = new Map<number, { row: LiveRow; messages: HarWebSocketMessage[]; text: string; shown: string }>();
  /**
   * Per stream read so far: its follower (an event stream read as it grows), or the messages sent so far per
   * direction (read from its entry), or 'ended' once read to its end.
   */
  private readonly reads = new Map<number, EventFollower | { send: number; receive: number } | 'ended'>();
  /** Streams whose rows changed since their last read, read in the next round. */
  private readonly dirty = new Set<number>();
  private readonly pulls = new PacedRuns(() => {
    const streams = [...this.dirty];
    this.dirty.clear();
    for (const seq of streams) this.pull(seq, (exchange, frame) => this.send({ type: 'frame', label: this.label, exchange, frame }));
  }, PULL_EVERY_MS);
  private relabelTimer: NodeJS.Timeout | undefined;
  /** The snapshot is being made (in steps). */
  private making = false;
  private readonly placer = new SeqPlacer([], PLACER_KEEP);

  constructor(
    private readonly label: string,
    private readonly live: LiveCapture,
    private readonly send: (event: UiEvent) => void,
    private readonly proto?: ProtoSchema,
  ) {}

  /**
   * The window: the capture's last FRAMES_SHOWN messages in bb's order, the lanes they and the open streams are on,
   * labelled at once. Made in steps (each `yield` may end a turn of the loop: framesFeed runs them a few ms a turn),
   * from the capture as it stood at the first; what happens meanwhile is told after it.
   */
  *snapshot(): Generator<void> {
    this.making = true;
    const rows = this.live.rows();
    const frames: Array<{ exchange: number; frame: Frame }> = [];
    const emit = (exchange: number, frame: Frame): void => void frames.push({ exchange, frame });
    const recent = yield* this.live.recentMessageSteps(FRAMES_SHOWN);
    yield;
    // Every numbered record known, in seq order, before any event is placed among them.
    const anchors = rows.map((r) => ({ seq: r.seq, time: r.startedAt / 1000 }));
    for (const m of recent) anchors.push({ seq: m.messageSeq, time: m.time });
    for (const a of anchors.sort((x, y) => x.seq - y.seq)) this.placer.add(a.seq, a.time);
    // Lanes in the order their exchanges began: the window's conversations, the open ones (their next messages come
    // live) and, until they are read below, every stream.
    const recentOf = new Set(recent.map((r) => r.seq));
    for (const row of rows) {
      if (row.kind === 'websocket' ? recentOf.has(row.seq) || going(row) : isLane(row)) this.lanes.set(row.seq, { row, messages: [], text: '', shown: laneShows(row) });
    }
    yield;
    // Building the messages (their payloads read and unsealed) is most of the work.
    for (let k = 0; k < recent.length; k++) {
      this.message(recent[k]!.seq, recent[k]!.build(), emit);
      if (k % SNAPSHOT_STEP === SNAPSHOT_STEP - 1) yield;
    }
    // The streams: the open ones, then the ended ones latest first while they give less than a window.
    const streams = rows.filter((r) => r.kind === 'sse' || r.kind === 'grpc');
    let fromStreams = 0;
    for (const row of streams) {
      if (!going(row)) continue;
      fromStreams += this.pull(row.seq, emit);
      yield;
    }
    const ended = streams.filter((r) => !going(r)).reverse();
    let read = 0;
    for (; read < ended.length && fromStreams < FRAMES_SHOWN; read++) {
      fromStreams += this.pull(ended[read]!.seq, emit);
      yield;
    }
    frames.sort((a, b) => a.frame.seq - b.frame.seq);
    const shown = frames.slice(-FRAMES_SHOWN);
    // A stream that ended with nothing in the window has no lane.
    const inWindow = new Set(shown.map((f) => f.exchange));
    for (const [seq, lane] of this.lanes) if (!inWindow.has(seq) && !going(lane.row)) this.lanes.delete(seq);
    // Every lane of the window is named to the page, then the oldest ended ones are let go here.
    this.making = false;
    this.relabel(false);
    for (const lane of this.lanes.values()) this.send({ type: 'connection', label: this.label, row: lane.row, text: lane.text });
    this.forgetEndedLanes();
    // Cut: streams left unread, frames past the window, or a capture listing more WebSocket messages than were read back.
    const listed = rows.reduce((n, r) => n + (r.kind === 'websocket' ? r.messages : 0), 0);
    if (read < ended.length || frames.length > shown.length || listed > recent.length) this.send({ type: 'window', label: this.label, limit: FRAMES_SHOWN, cut: true });
    for (const { exchange, frame } of shown) this.send({ type: 'frame', label: this.label, exchange, frame });
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
    const shown = laneShows(row);
    if (lane) {
      lane.row = row;
      // A row changes with each message (its count): the page is told only what its lane shows.
      if (lane.shown !== shown) {
        lane.shown = shown;
        this.send({ type: 'connection', label: this.label, row, text: lane.text });
      }
    } else {
      // A new lane is named at once; its label's difference from the others follows (relabel).
      const text = this.textOf(row, laneLabels([{ url: row.url, messages: [] }])[0]!);
      this.lanes.set(row.seq, { row, messages: [], text, shown });
      this.scheduleRelabel();
      this.send({ type: 'connection', label: this.label, row, text });
    }
    if (row.kind !== 'websocket') {
      this.dirty.add(row.seq);
      this.pulls.ask();
    }
  }

  /** Stops the timers. */
  close(): void {
    this.pulls.stop();
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

  // An SSE stream's or gRPC call's messages not sent yet (how many); a gRPC message still cut short waits for its end.
  // An event stream the live capture can follow is read from where the last read stopped; the rest from its entry.
  private pull(exchange: number, emit: (exchange: number, frame: Frame) => void): number {
    let read = this.reads.get(exchange);
    if (read === 'ended') return 0;
    if (read === undefined) this.reads.set(exchange, (read = this.live.followEvents(exchange) ?? { send: 0, receive: 0 }));
    if ('next' in read) {
      const { events, ended } = read.next();
      if (ended) this.ended(exchange);
      for (const e of events) this.message(exchange, sseAsMessage(e), emit);
      return events.length;
    }
    const entry = this.live.entry(exchange);
    if (!entry) return 0;
    const sse = isSseEntry(entry);
    const messages = sse ? sseMessages(entry) : isGrpcEntry(entry) ? entry._grpcMessages!.map(grpcAsMessage) : [];
    const sent = read;
    const seen = { send: 0, receive: 0 };
    let told = 0;
    for (const m of messages) {
      if (m.type === 'error') continue;
      if (seen[m.type]++ < sent[m.type]) continue;
      if (entry._bb?.inFlight && (m._bb as { truncated?: number } | undefined)?.truncated !== undefined) break;
      sent[m.type]++;
      told++;
      this.message(exchange, m, emit, entry.request.url);
    }
    if (!entry._bb?.inFlight) this.ended(exchange);
    return told;
  }

  // A stream read to its end: nothing more to read (a stream per request, for hours: the oldest marks go past FOLLOWED_KEPT).
  private ended(exchange: number): void {
    this.reads.set(exchange, 'ended');
    if (this.reads.size <= FOLLOWED_KEPT) return;
    for (const [seq, read] of this.reads) {
      if (this.reads.size <= FOLLOWED_KEPT / 2) break;
      if (read === 'ended') this.reads.delete(seq);
    }
  }

  private scheduleRelabel(): void {
    // The snapshot labels its lanes at its end: a timer of its own first steps would name some of them early.
    if (this.making) return;
    this.relabelTimer ??= setTimeout(() => {
      this.relabelTimer = undefined;
      this.relabel(true);
    }, RELABEL_AFTER_MS);
  }

  // Lets the oldest ended lanes past ENDED_LANES_LABELLED go (they keep the label the page was told last).
  private forgetEndedLanes(): void {
    if (this.lanes.size <= 2 * ENDED_LANES_LABELLED) return;
    const ended = [...this.lanes].filter(([, lane]) => !going(lane.row)).map(([seq]) => seq);
    for (const seq of ended.slice(0, Math.max(0, ended.length - ENDED_LANES_LABELLED))) this.lanes.delete(seq);
  }

  // `bb frames`'s labels over the lanes kept (the open ones and the latest ended); a lane whose label changed is told again.
  private relabel(tell: boolean): void {
    if (tell) this.forgetEndedLanes();
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

/** The frames tab's feed over these recordings; `waitingMax`: WAITING_MAX (a test makes it small). */
export function framesFeed(sources: LiveSource[], limits: { waitingMax?: number } = {}): UiFeed {
  return {
    name: 'frames',
    open(_key, send, snapshotGoesOn) {
      send({ type: 'captures', labels: sources.map((s) => s.label) });
      const states = sources.map(({ label, live, proto }) => new SourceFrames(label, live, send, proto));
      const snapshot = steppedSnapshot<{ i: number; event: LiveEvent }>({
        steps: (function* () {
          for (const s of states) yield* s.snapshot();
        })(),
        snapshotGoesOn,
        told: ({ i, event }) => states[i]!.onEvent(event),
        waitingMax: limits.waitingMax,
        what: "the frames tab's window",
      });
      const stops = sources.map(({ live }, i) => live.on((event) => snapshot.tell({ i, event })));
      return () => {
        snapshot.stop();
        stops.forEach((stop) => stop());
        states.forEach((s) => s.close());
      };
    },
  };
}
