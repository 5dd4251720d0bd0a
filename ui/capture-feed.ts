// The capture view's feeds: what `bb capture --ui` streams to the page, from
// each recording's live capture (capture/live.ts, the same records the HAR is
// written from, redacted as it will be).
//
//   exchanges            {type:"captures", labels}, then every page and the
//                        rows so far (the latest LIVE_ROWS and the open ones;
//                        {type:"window", label, limit, cut} when older ones
//                        are not listed), then each new or changed row and
//                        each step: {type:"row", label, row} / {type:"page", label, id, title, time}
//   exchange?key=L/SEQ[~N]
//                        {type:"entry", label, row, entry, grpc?, earlier, window, most}
//                        (the HAR entry as it stands; a gRPC call's messages
//                        decoded; a WebSocket conversation with its latest
//                        `window` messages, ENTRY_MESSAGES or N up to
//                        ENTRY_MESSAGES_MAX (`most`), `earlier` the ones it
//                        lists before them), then
//                        {type:"message", message} per WebSocket message,
//                        {type:"row"} per change, and a fresh entry at
//                        most every ENTRY_EVERY_MS while its body grows (SSE
//                        events, gRPC messages, a download), paced by what
//                        building it costs (paced.ts); a WebSocket
//                        conversation's once it closes, without its
//                        messages (`messagesKept`: the page has them, each
//                        told as it came)
import { LIVE_ROWS, type HarEntry, type LiveCapture, type LiveEvent, type LiveRow, type ProtoSchema } from '../capture/index.js';
import { grpcSchemaAt, grpcShown, type ShownMessage } from '../inspect/index.js';
import type { UiEvent, UiFeed } from './server.js';
import { PacedRuns } from './paced.js';
import { steppedSnapshot } from './stepped.js';
import { indexInAscending } from '../core/index.js';

/** One recording the view shows. */
export interface LiveSource {
  /** The capture's label (several targets: one each). */
  label: string;
  /** Its live capture (Recording.live()). */
  live: LiveCapture;
  /** The .proto files that name its gRPC messages' fields (the config's normalize.proto); absent: field numbers. */
  proto?: ProtoSchema;
}

/** A conversation's latest messages its entry is sent with (the page keeps as many: assets/views/capture.js). */
export const ENTRY_MESSAGES = 1_000;
/** The most a page may ask for (key `L/SEQ~N`): ~9 µs each to read back and build here, made a few ms a turn. */
export const ENTRY_MESSAGES_MAX = 10_000;

/** How often an open exchange whose body grows is sent again, at most. */
const ENTRY_EVERY_MS = 200;

/** Rows made between looks at the clock while the list's snapshot is made. */
const ROWS_STEP = 2000;

/**
 * The exchange list's feed: every step and row, then each change; `limits` a test's (ROWS_STEP rows between looks
 * at the clock, SNAPSHOT_TURN_MS a turn). The rows (100,000 and more) are made a few ms a
 * turn (stepped.ts), in seq order; a change of a row not sent yet is dropped (the row is made later, as it then
 * stands), any other change waits and follows the snapshot.
 */
export function exchangesFeed(sources: LiveSource[], limits: { rowsStep?: number; turnMs?: number } = {}): UiFeed {
  const rowsStep = limits.rowsStep ?? ROWS_STEP;
  return {
    name: 'exchanges',
    open(_key, send, snapshotGoesOn) {
      send({ type: 'captures', labels: sources.map((s) => s.label) });
      // Per source: the seqs its snapshot lists, and how many of them are sent.
      const lists = sources.map(({ label, live }) => {
        for (const page of live.pages()) send({ type: 'page', label, ...page });
        const { seqs, cut } = live.listedRows(LIVE_ROWS);
        if (cut) send({ type: 'window', label, limit: LIVE_ROWS, cut: true });
        return { seqs, sent: 0 };
      });
      const steps = (function* () {
        for (const [i, { label, live }] of sources.entries()) {
          const list = lists[i]!;
          while (list.sent < list.seqs.length) {
            const end = Math.min(list.seqs.length, list.sent + rowsStep);
            for (; list.sent < end; list.sent++) {
              // Let go meanwhile (the oldest finished rows, past twice LIVE_ROWS): not listed any more.
              const row = live.row(list.seqs[list.sent]!);
              if (row) send({ type: 'row', label, row });
            }
            yield;
          }
        }
      })();
      const snapshot = steppedSnapshot<{ i: number; event: LiveEvent }>({
        steps,
        snapshotGoesOn,
        told: ({ i, event }) => send({ ...event, label: sources[i]!.label }),
        turnMs: limits.turnMs,
        keeps: ({ i, event }) => event.type !== 'row' || !notSentYet(lists[i]!, event.row.seq),
        what: "the exchanges tab's rows",
      });
      const stops = sources.map(({ live }, i) =>
        live.on((event) => {
          if (event.type !== 'message') snapshot.tell({ i, event });
        }),
      );
      return () => {
        snapshot.stop();
        stops.forEach((stop) => stop());
      };
    },
  };
}

// Whether the snapshot lists row `seq` and has not sent it yet (then it sends the row as it stands then).
const notSentYet = (list: { seqs: number[]; sent: number }, seq: number): boolean => indexInAscending(list.seqs, seq, list.sent) >= 0;

/** One exchange's feed: its entry as it stands, then its messages and changes. */
export function exchangeFeed(sources: LiveSource[]): UiFeed {
  return {
    name: 'exchange',
    open(key, send, snapshotGoesOn) {
      const m = /^(.*)\/(\d+)(?:~(\d+))?$/.exec(key ?? '');
      const source = m ? sources.find((s) => s.label === m[1]) : undefined;
      const seq = m ? Number(m[2]) : NaN;
      if (!source || !source.live.row(seq)) return undefined;
      const window = Math.min(ENTRY_MESSAGES_MAX, Math.max(1, m![3] === undefined ? ENTRY_MESSAGES : Number(m![3])));
      const { label, live, proto } = source;
      const shown: Array<ShownMessage | null> = [];
      const resends = new PacedRuns(() => {
        const row = live.row(seq);
        // A conversation's messages all came one by one: its entry again (its close) is read without them.
        if (row?.kind === 'websocket') send({ ...entryEvent(label, row, live.latestOf(seq, 0), window, shown, proto), messagesKept: true });
        else send(entryEvent(label, row, live.latestOf(seq, window), window, shown, proto));
      }, ENTRY_EVERY_MS);
      // The entry is made in steps (a conversation's 10,000 latest messages: ~90 ms of the relay's thread at once);
      // what the capture tells meanwhile follows it.
      const snapshot = steppedSnapshot<LiveEvent>({
        steps: (function* () {
          // The first build, made in steps, is the resends' work too: the first resend is paced by its costliest step.
          const building = live.latestOfSteps(seq, window);
          let costliest = 0;
          let latest: ReturnType<LiveCapture['latestOf']>;
          for (;;) {
            const start = performance.now();
            const r = building.next();
            const end = performance.now();
            costliest = Math.max(costliest, end - start);
            resends.ranElsewhere(costliest, end);
            if (r.done) {
              latest = r.value;
              break;
            }
            yield;
          }
          // Gone meanwhile (let go, or never an entry): the page keeps what it has.
          if (latest) send(entryEvent(label, live.row(seq), latest, window, shown, proto));
        })(),
        snapshotGoesOn,
        told: (event) => {
          if (event.type === 'message' && event.seq === seq) send({ type: 'message', message: event.message });
          if (event.type !== 'row' || event.row.seq !== seq) return;
          send({ type: 'row', label, row: event.row } satisfies UiEvent);
          // WebSocket messages come one by one above; other bodies only whole, so the entry is sent again.
          if (grows(event.row)) resends.ask();
        },
        what: "an exchange's entry",
      });
      const stop = live.on((event) => snapshot.tell(event));
      return () => {
        snapshot.stop();
        stop();
        resends.stop();
      };
    },
  };
}

/**
 * An exchange's entry event; a gRPC call's messages also decoded (grpc-tree.ts:
 * null where one shows as hex). `shown` keeps what earlier events decoded: a
 * call's messages only grow, so only the new ones (and the last, which a cut
 * may have changed) are decoded again; with `proto`, named where it defines the call's method.
 */
function entryEvent(
  label: string, row: LiveRow | undefined, latest: { entry: HarEntry; earlier: number } | undefined, window: number, shown: Array<ShownMessage | null>, proto?: ProtoSchema,
): UiEvent {
  const entry = latest?.entry;
  const event: UiEvent = { type: 'entry', label, row, entry, earlier: latest?.earlier ?? 0, window, most: ENTRY_MESSAGES_MAX };
  const messages = entry?._grpcMessages;
  if (messages) {
    shown.length = Math.min(shown.length, Math.max(0, messages.length - 1));
    const schemaOf = grpcSchemaAt(proto, entry!.request.url);
    for (let i = shown.length; i < messages.length; i++) shown.push(grpcShown(messages[i]!, schemaOf) ?? null);
    event['grpc'] = shown.slice();
  }
  return event;
}

/** Whether a change of this row changes its entry beyond what a message event says. */
const grows = (row: LiveRow): boolean => row.kind !== 'websocket' || row.state === 'closed';
