// Streams other than WebSocket, as frames lists them: a server-sent event
// stream's events become receive messages of the stream (as a gRPC call's
// messages do, below), and where things without a `_bb.seq` go in bb's
// total order. Pure functions over HAR entries.
//
// bb numbers what it records (`_bb.seq`) but not SSE events, response heads,
// or gRPC messages read over HTTP/1.1; those carry only a time. Mixing "by
// seq" and "by time" comparisons in one sort is not a total order, so such
// items get a seq *position* instead: just before the first numbered record
// that was made at or after their time (SeqPlacer), kept between their
// exchange's start and end.
import { grpcStatus, grpcStatusName, isEventStreamEntry, sseEventsOf, type HarEntry, type HarEventSourceMessage, type HarGrpcMessage, type HarWebSocketMessage } from '../capture/index.js';

/**
 * True when an entry is a server-sent event stream: one bb (or Chrome) split
 * into events, or a text/event-stream response another tool kept whole as its
 * body (Firefox, mitmproxy), or kept nothing of.
 */
export function isSseEntry(e: HarEntry): boolean {
  if (Array.isArray(e._webSocketMessages) || Array.isArray(e._grpcMessages) || e.response.status === 101) return false;
  return Array.isArray(e._eventSourceMessages) || isEventStreamEntry(e);
}

/** An SSE entry's events as frames lists them (capture/har-entry.ts sseEventsOf: a body kept whole is read too). */
export function sseMessages(e: HarEntry): HarWebSocketMessage[] {
  return sseEventsOf(e).map(sseAsMessage);
}

/** Facts about an SSE event kept on its message: the event name ("message" when none came) and last event id. */
export interface SseFacts {
  event: string;
  id: string;
}

/** An SSE event in the shape frames lists (a text message the server sent), marked `_bb.sse`. */
export function sseAsMessage(ev: HarEventSourceMessage): HarWebSocketMessage {
  const sse: SseFacts = { event: ev.eventName || 'message', id: ev.eventId ?? '' };
  return { type: 'receive', time: ev.time, opcode: 1, data: ev.data, _bb: { sse } as unknown as NonNullable<HarWebSocketMessage['_bb']> };
}

/** The SSE facts of a message, when it is an event. */
export function sseFacts(m: HarWebSocketMessage): SseFacts | undefined {
  return (m._bb as { sse?: SseFacts } | undefined)?.sse;
}

/** What kind of message a row is: error, grpc, sse, or its WebSocket opcode's name. */
export function messageKindOf(m: HarWebSocketMessage, opcodeName: (op: number) => string): string {
  if (m.type === 'error') return 'error';
  if ((m._bb as { grpc?: boolean } | undefined)?.grpc) return 'grpc';
  if (sseFacts(m)) return 'sse';
  return opcodeName(m.opcode);
}

/** Who ended a stream: the client or the upstream hung up, the server finished it, or it was open when the capture ended. */
export type StreamEnd = 'client' | 'upstream' | 'server' | 'open';

/** How an entry's stream ended, from bb's facts (a HAR from elsewhere: "server"). */
export function streamEnd(e: HarEntry): StreamEnd {
  if (e._bb?.aborted) return e._bb.aborted;
  if (e._bb?.inFlight) return 'open';
  return 'server';
}

/** "ended by the client", for headings. */
export function streamEndText(end: StreamEnd): string {
  switch (end) {
    case 'client': return 'ended by the client';
    case 'upstream': return 'cut off by the server';
    case 'open': return 'open when the capture ended';
    default: return 'ended by the server';
  }
}

/** True when an entry's response is a stream of messages (SSE or gRPC), so its response row goes where its head arrived. */
export function isStreamEntry(e: HarEntry): boolean {
  return isSseEntry(e) || (Array.isArray(e._grpcMessages) && !Array.isArray(e._webSocketMessages));
}

/**
 * When a stream's response head arrived, epoch seconds, from HAR timings:
 * wait is counted from the request's end when the request ended first
 * (start + send + wait), else from its start (start + wait), so the earlier
 * of the two that is not after the first message received is it. NaN when
 * no head came (wait unknown).
 */
export function responseHeadTime(e: HarEntry, started: number, firstReceived: number | undefined): number {
  const { send, wait } = e.timings;
  if (!(wait >= 0)) return NaN;
  const afterRequest = started + ((send > 0 ? send : 0) + wait) / 1000;
  const fromStart = started + wait / 1000;
  const head = firstReceived !== undefined && afterRequest > firstReceived ? fromStart : afterRequest;
  return firstReceived !== undefined ? Math.min(head, firstReceived) : head;
}

/** Places time-only items among seq-numbered records (see the file's comment). */
export class SeqPlacer {
  private seqs: number[];
  private times: number[];

  /**
   * `anchors`: every numbered record with the time it was made (seconds). With `keep`, a live placer keeps the
   * latest `keep` to twice as many of those it is added (an item older than them all goes before them).
   */
  constructor(
    anchors: Array<{ seq: number; time: number }>,
    private readonly keep = Infinity,
  ) {
    const sorted = anchors.filter((a) => Number.isFinite(a.time)).sort((a, b) => a.seq - b.seq);
    this.seqs = sorted.map((a) => a.seq);
    // Times as a running maximum, so a binary search over them is sound.
    let max = -Infinity;
    this.times = sorted.map((a) => (max = Math.max(max, a.time)));
  }

  /** Adds a record numbered after every one so far (a live capture's next); an older seq is left out, keeping the order sound. */
  add(seq: number, time: number): void {
    if (!Number.isFinite(time) || (this.seqs.length > 0 && seq <= this.seqs.at(-1)!)) return;
    this.seqs.push(seq);
    this.times.push(Math.max(this.times.at(-1) ?? -Infinity, time));
    if (this.seqs.length >= 2 * this.keep) {
      this.seqs = this.seqs.slice(-this.keep);
      this.times = this.times.slice(-this.keep);
    }
  }

  /** True when there are numbered records to place among. */
  get active(): boolean {
    return this.seqs.length > 0;
  }

  /** A fractional seq for an item made at `time`, kept strictly between `after` and `before` when given. */
  place(time: number, after?: number, before?: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.times[mid]! < time) lo = mid + 1;
      else hi = mid;
    }
    let at = lo < this.seqs.length ? this.seqs[lo]! - 0.5 : (this.seqs.at(-1) ?? 0) + 0.5;
    if (!Number.isFinite(time)) at = (this.seqs.at(-1) ?? 0) + 0.5;
    if (after !== undefined && at <= after) at = after + 0.5;
    if (before !== undefined && at >= before) at = before - 0.25;
    return at;
  }
}

/** A gRPC call's grpc-status (null: none came) and grpc-message. */
export interface GrpcCallStatus {
  status: number | null;
  message?: string;
}

/** "grpc 14 UNAVAILABLE: going away", "grpc no status". */
export function grpcStatusText(s: GrpcCallStatus): string {
  if (s.status === null) return 'grpc no status';
  const name = grpcStatusName(s.status);
  return `grpc ${s.status}${name ? ` ${name}` : ''}${s.message ? `: ${s.message}` : ''}`;
}

/** True when an entry is a gRPC call bb (or another tool) split into messages. */
export function isGrpcEntry(e: HarEntry): boolean {
  return Array.isArray(e._grpcMessages);
}

/** A gRPC call's status as its HAR says (bb's _bb.grpc, else the trailers, else trailers-only headers). */
export function grpcCallStatus(e: HarEntry): GrpcCallStatus {
  return e._bb?.grpc ?? grpcStatus(e.response._trailers, e.response.headers);
}

/** A gRPC message in the shape frames lists (opcode 2, binary), marked `_bb.grpc`; seq kept when the capture has one. */
export function grpcAsMessage(m: HarGrpcMessage): HarWebSocketMessage {
  return { type: m.type, time: m.time, opcode: 2, data: m.data, _bb: { ...m._bb, grpc: true, compressed: m.compressed } as unknown as NonNullable<HarWebSocketMessage['_bb']> };
}
