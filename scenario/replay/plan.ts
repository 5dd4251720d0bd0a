// The replay plan (pure): which exchanges to re-drive, on which lane, after
// what. Entries go in capture order (`_bb.seq`, else start time, else file
// position: diff's one ordering function). Each original client connection
// becomes one lane whose requests run in order; requests that overlapped on
// one connection (HTTP/2 multiplexing in a browser HAR) get lanes of their
// own, so nothing is serialized that was concurrent.
//
// Happens-before: a request starts only after every exchange that had
// completed before it started in the original, and after each open
// WebSocket has received as many server messages as it had by then. Only the
// last such exchange per lane is kept: lanes are in order, so it implies the
// rest. Positions are `_bb.seq` numbers when the capture has them everywhere
// (the proxy's one total order), else times in ms.
import type { BbCode } from '../../core/index.js';
import { BbError } from '../../core/index.js';
import { MESSAGES_LISTED, entryIdentity, isH2WebSocketEntry, isWebSocketEntry, exchangeEndMs, messageEpochMs, type Har, type HarEntry, type HarReplayOf, type HarReplaySkip, type HarWebSocketMessage } from '../../capture/index.js';
import { sortForComparison } from '../../diff/index.js';

/** One WebSocket message of the original, as the replay needs it. */
export interface PlannedMessage {
  /** send (the client's, replayed) or receive (the server's, counted). */
  type: 'send' | 'receive';
  /** The opcode as recorded (1 text, 2 binary, 8 close, 9 ping, 10 pong). */
  opcode: number;
  /** Text for opcode 1, base64 otherwise (HAR's rule). */
  data: string;
  /** Position in the original's order. */
  pos: number;
  /** ms since the connection opened in the original. */
  offsetMs: number;
  /** Sent compressed in the original. */
  compressed?: boolean;
  /** close: the code and reason. */
  code?: number;
  reason?: string;
  /** send: server messages (data, ping, pong) the original had received before this one. */
  receivedBefore: number;
  /** send: what must have completed before it goes (other lanes). */
  waits: Waits;
}

/** What one step waits for before it starts. */
export interface Waits {
  /** Exchanges (plan indices) that must have completed. */
  after: number[];
  /** Open WebSockets (plan indices) that must have received this many server messages. */
  received: Array<{ exchange: number; count: number }>;
}

/** One exchange to re-drive. */
export interface PlannedExchange {
  /** Index in the plan. */
  i: number;
  /** How reports name it: "#<seq>" (bb captures) or "#<position>". */
  key: string;
  /** The original entry. */
  entry: HarEntry;
  /** The lane (replay connection) it runs on. */
  lane: number;
  /** Start and end positions in the original. */
  start: number;
  end: number;
  /** ms since the first request of the capture, for --pace. */
  offsetMs: number;
  /** What must happen first. */
  waits: Waits;
  /** The title of the page (step) it was recorded in. */
  page?: string;
  /** WebSocket conversation, for upgrades. */
  ws?: { messages: PlannedMessage[]; received: number };
  /** A gRPC call: the position of each recorded message (`entry._grpcMessages`, same index) in the plan's units; undefined where the capture has none. */
  grpcPos?: Array<number | undefined>;
}

/** The whole plan. */
export interface ReplayPlan {
  /** Exchanges in capture order. */
  exchanges: PlannedExchange[];
  /** Lanes: plan indices in order. */
  lanes: number[][];
  /** Entries not replayed and why. */
  skipped: Array<{ entry: string; reason: string }>;
  /** The origin replayed: the one whose server answered the most exchanges (other origins in a browser HAR are skipped). */
  origin: string;
  /** What the new capture records of this one (log._bb.replayOf): its identity and the entries skipped, so bb diff leaves them out. */
  replayOf: HarReplayOf;
}

/** Message opcodes that count as "the server sent something" for --ws wait. */
const COUNTED = new Set([1, 2, 9, 10]);

function fail(code: BbCode, message: string): never {
  throw new BbError(code, message);
}

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'ws:' || u.protocol === 'wss:' ? `${u.protocol.replace('ws', 'http')}//${u.host}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A close frame's code and reason: bb's own record of them, else its payload (RFC 6455 §5.5.1: a code in two bytes
 * big-endian, then the reason's UTF-8); an empty payload is a close without a status (1005, §7.1.5), which the
 * replay sends as such, not as 1000.
 */
function closeOf(m: HarWebSocketMessage): { code: number; reason?: string } {
  if (typeof m._bb?.code === 'number') return { code: m._bb.code, ...(m._bb.reason !== undefined ? { reason: m._bb.reason } : {}) };
  const payload = Buffer.from(m.data, 'base64');
  if (payload.length < 2) return { code: 1005 };
  return { code: payload.readUInt16BE(0), reason: payload.subarray(2).toString('utf8') };
}

/** A request bb can send again: not a tunnel, not bytes it could not parse, no CONNECT but a WebSocket's over HTTP/2 (RFC 8441: replayed as a WebSocket over HTTP/1.1). */
function isResendable(e: HarEntry): boolean {
  return !!e.request && typeof e.request.url === 'string' && !e._bb?.tunnel && !e._bb?.rawPacket && (e.request.method !== 'CONNECT' || isH2WebSocketEntry(e));
}

/**
 * The origin a capture is replayed to: the one whose server answered the
 * most exchanges, ties to the earliest. A browser through a forward proxy
 * also sends its own traffic (update checks, sign-in pings) to other hosts,
 * often first; an exchange bb's proxy answered itself (`_bb.error`: the
 * upstream never did) counts only when nothing was answered at all.
 */
function replayedOrigin(ordered: HarEntry[]): string | undefined {
  const answered = new Map<string, number>();
  for (const e of ordered) {
    const o = isResendable(e) ? originOf(e.request.url) : undefined;
    if (o !== undefined) answered.set(o, (answered.get(o) ?? 0) + (e._bb?.error ? 0 : 1));
  }
  let best: string | undefined;
  for (const [o, n] of answered) if (best === undefined || n > answered.get(best)!) best = o;
  return best;
}

/** Builds the plan from a capture; throws a BbError for a capture that cannot be replayed. */
export function planReplay(har: Har, file = 'the capture'): ReplayPlan {
  const entries = har.log.entries;
  if (entries.length === 0) fail('BB_REPLAY_NO_ENTRIES', `${file} holds no entries: there is nothing to replay; record some traffic first.`);
  const order = sortForComparison(entries.map((entry, index) => ({ entry, index, seq: entry._bb?.seq, started: entry.startedDateTime })));
  const pages = new Map((har.log.pages ?? []).map((p) => [p.id, p.title]));
  const skipped: ReplayPlan['skipped'] = [];
  const origin = replayedOrigin(order.map(({ entry }) => entry));
  const kept: Array<{ entry: HarEntry; key: string }> = [];
  const left: HarReplaySkip[] = [];
  const leave = (entry: HarEntry, index: number, seq: number | undefined, reason: HarReplaySkip['reason'], origin?: string) =>
    left.push({ index, ...(typeof seq === 'number' ? { seq } : {}), id: entryIdentity(entry), ...(origin !== undefined ? { origin } : {}), reason });
  for (const { entry, index, seq } of order) {
    const key = `#${seq ?? index + 1}`;
    if (!entry.request || typeof entry.request.url !== 'string') fail('BB_REPLAY_NO_REQUEST', `${file}: entry ${key} has no request (log.entries[${index}].request): bb replay re-sends requests; export the HAR again with requests.`);
    if (entry._bb?.truncated?.request !== undefined) {
      fail('BB_REPLAY_TRUNCATED', `${file}: the request body of ${key} ${entry.request.method} ${entry.request.url} was truncated at capture (${entry._bb.truncated.request} bytes kept): it cannot be re-sent; record again with a larger --body-cap.`);
    }
    // A client message cut at capture (past the body cap, or past its conversation's budget) would go as its start only.
    const cut = entry._webSocketMessages?.find((m) => m.type === 'send' && m._bb?.truncated !== undefined);
    if (cut) {
      fail('BB_REPLAY_TRUNCATED', `${file}: a WebSocket message the client sent on ${key} ${entry.request.url} was cut at capture (${cut._bb!.truncated} of ${cut._bb!.size} bytes kept): it cannot be re-sent; record again with a larger --body-cap or --ws-budget.`);
    }
    // Client messages past those the capture lists are kept as a count and a hash only: there is nothing to send.
    const unsent = entry._webSocketMessages !== undefined ? (entry._bb?.unlisted?.request ?? 0) : 0;
    if (unsent > 0) {
      fail('BB_REPLAY_TRUNCATED', `${file}: the client sent ${unsent} WebSocket messages on ${key} ${entry.request.url} past the ${MESSAGES_LISTED} a capture lists; only their count and a hash were kept, so they cannot be re-sent: replay a shorter conversation.`);
    }
    if (!isResendable(entry)) {
      skipped.push({ entry: key, reason: entry._bb?.tunnel ? 'a tunnel (not intercepted)' : 'not an HTTP request bb could parse' });
      leave(entry, index, seq, entry._bb?.tunnel ? 'tunnel' : 'unparsed');
      continue;
    }
    const o = originOf(entry.request.url);
    if (o === undefined) {
      skipped.push({ entry: key, reason: `not an http(s) URL (${entry.request.url.slice(0, 40)})` });
      leave(entry, index, seq, 'url');
      continue;
    }
    if (o !== origin) {
      skipped.push({ entry: key, reason: `another origin (${o}; the replay's is ${origin})` });
      leave(entry, index, seq, 'origin', o);
      continue;
    }
    kept.push({ entry, key });
  }
  if (kept.length === 0) fail('BB_REPLAY_NO_ENTRIES', `${file} holds no request bb can replay (${skipped.length} skipped: ${skipped[0]?.reason ?? 'none'}).`);
  const bySeq = kept.every(({ entry }) => typeof entry._bb?.seq === 'number' && (isWebSocketEntry(entry) ? (entry._webSocketMessages ?? []).every((m) => typeof m._bb?.seq === 'number') : true));
  const t0 = Math.min(...kept.map(({ entry }) => Date.parse(entry.startedDateTime)).filter((t) => !Number.isNaN(t)));
  const base = Number.isFinite(t0) ? t0 : 0;

  const exchanges: PlannedExchange[] = kept.map(({ entry, key }, i) => {
    const startMs = Date.parse(entry.startedDateTime);
    const msgs = entry._webSocketMessages ?? [];
    const endMs = exchangeEndMs(entry, startMs);
    const start = bySeq ? entry._bb!.seq : startMs;
    const end = bySeq ? (entry._bb!.seqEnd ?? Infinity) : endMs;
    const page = entry.pageref ? pages.get(entry.pageref) ?? entry.pageref : undefined;
    const ex: PlannedExchange = { i, key, entry, lane: -1, start, end, offsetMs: Number.isNaN(startMs) ? 0 : startMs - base, waits: { after: [], received: [] }, ...(page ? { page } : {}) };
    if (isWebSocketEntry(entry)) ex.ws = planMessages(msgs, bySeq, startMs);
    if (entry._grpcMessages) ex.grpcPos = entry._grpcMessages.map((m) => (bySeq ? m._bb?.seq : messageEpochMs(m.time)));
    return ex;
  });

  // Lanes: first fit per connection, so a lane never holds two exchanges that overlapped.
  const lanes: number[][] = [];
  const laneEnds: number[] = [];
  const lanesOf = new Map<string, number[]>();
  for (const ex of exchanges) {
    const conn = ex.entry.connection ?? '';
    const mine = lanesOf.get(conn) ?? [];
    lanesOf.set(conn, mine);
    // WebSockets are lanes of their own: their "end" is the close, long after later requests.
    let lane = ex.ws ? undefined : mine.find((l) => laneEnds[l]! < ex.start && !exchanges[lanes[l]!.at(-1)!]!.ws);
    if (lane === undefined) {
      lane = lanes.length;
      lanes.push([]);
      laneEnds.push(-Infinity);
      mine.push(lane);
    }
    lanes[lane]!.push(ex.i);
    laneEnds[lane] = ex.end;
    ex.lane = lane;
  }

  const waitsAt = (pos: number, ownLane: number, ownWs?: number): Waits => {
    const after: number[] = [];
    const received: Waits['received'] = [];
    for (let l = 0; l < lanes.length; l++) {
      if (l === ownLane) continue;
      const lane = lanes[l]!;
      // Ends are increasing along a lane: the last one before pos implies the others.
      let lo = 0;
      let hi = lane.length - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (exchanges[lane[mid]!]!.end < pos) {
          found = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      if (found >= 0) after.push(lane[found]!);
      // An open WebSocket on that lane: how far its conversation had got.
      const next = exchanges[lane[found + 1] ?? -1];
      if (next?.ws && next.start < pos && next.i !== ownWs) {
        const count = next.ws.messages.filter((m) => m.type === 'receive' && COUNTED.has(m.opcode) && m.pos < pos).length;
        if (count > 0) received.push({ exchange: next.i, count });
      }
    }
    return { after, received };
  };
  for (const ex of exchanges) {
    ex.waits = waitsAt(ex.start, ex.lane);
    for (const m of ex.ws?.messages ?? []) if (m.type === 'send') m.waits = waitsAt(m.pos, ex.lane, ex.i);
  }
  return { exchanges, lanes, skipped, origin: origin!, replayOf: { entries: entries.length, first: entryIdentity(entries[0]!), skipped: left } };
}

function planMessages(msgs: HarWebSocketMessage[], bySeq: boolean, openMs: number): NonNullable<PlannedExchange['ws']> {
  let received = 0;
  const messages: PlannedMessage[] = [];
  // Within one conversation, arrival times order the messages: a compressed
  // message takes its `_bb.seq` when its inflate is done, which can be after a
  // reply in the other direction that it caused; its time is its chunk's.
  const ordered = msgs
    .map((m, k) => ({ m, k }))
    .filter(({ m }) => m.type === 'send' || m.type === 'receive')
    .sort((a, b) => messageEpochMs(a.m.time) - messageEpochMs(b.m.time) || (a.m._bb?.seq ?? 0) - (b.m._bb?.seq ?? 0) || a.k - b.k);
  let last = -Infinity;
  for (const { m } of ordered) {
    // Positions follow that order (a hair past the previous one when seq disagrees).
    const at = bySeq ? m._bb!.seq : messageEpochMs(m.time);
    last = at > last ? at : last + 1e-3;
    const pm: PlannedMessage = {
      type: m.type as 'send' | 'receive',
      opcode: m.opcode,
      data: m.data,
      pos: last,
      offsetMs: Number.isNaN(openMs) ? 0 : Math.max(0, messageEpochMs(m.time) - openMs),
      receivedBefore: received,
      waits: { after: [], received: [] },
      ...(m._bb?.compressed !== undefined ? { compressed: m._bb.compressed } : {}),
      ...(m.opcode === 8 ? closeOf(m) : {}),
    };
    if (pm.type === 'receive' && COUNTED.has(pm.opcode)) received++;
    messages.push(pm);
  }
  return { messages, received };
}
