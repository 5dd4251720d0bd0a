// capture/'s defaults and the names of its files, once. A capture at <out>
// is written through <out>.journal (records) and <out>.bodies (body bytes)
// until it closes; every command that takes a capture path accepts either
// <out> or <out>.journal and finds the rest here.

/** Default per-body cap on recorded bytes: 16 MiB (the rest streams through unrecorded). */
export const DEFAULT_BODY_CAP = 16 * 1024 * 1024;

/**
 * Message bytes recorded per WebSocket connection and direction: past it, each message keeps its size and a hash
 * of its payload, not its bytes, so a conversation's entry stays one a reader can parse (docs/capture-format.md
 * "What a capture holds"). 64 MiB: two directions' worth is 171M characters of base64, 256M of text escaped twice.
 */
export const DEFAULT_WS_BUDGET = 64 * 1024 * 1024;

/**
 * The most `bodyCap` and `wsBudget` may be: an entry holds its bodies (or a conversation's messages) as JSON text,
 * and readers parse one entry of at most 480 MB (capture/reader-index.ts ONE_PIECE_LIMIT); two bodies of 128 MiB
 * are 342M characters of base64.
 */
export const MAX_RECORDED_CAP = 128 * 1024 * 1024;

/**
 * Messages listed per body and direction: a gRPC call's `_grpcMessages` and an event stream's `_eventSourceMessages`
 * hold the first 100,000; the rest stay in the body's bytes, counted in `_bb.unlisted` and compared by a digest
 * (docs/capture-format.md "What a capture holds"). A listed message costs ~650 bytes while the HAR is written and
 * ~1.4 KB in `bb diff`, where its bytes may be 5 (an empty gRPC message): 16 MiB of them listed were 3.4M objects,
 * 2.3 GB to write and 4.6 GB to compare.
 */
export const MESSAGES_LISTED = 100_000;

/**
 * A body's pieces recorded each at its own time: a piece is a journal record of the body's bytes (chunks that follow
 * each other within 1 ms are one, journal-fold.ts JOIN_MS). Past them the recorder gathers the body's kept bytes in
 * memory and writes them as one piece at most every GATHER_MS, or every hundredth of the exchange's age when that is
 * longer, or at GATHER_BYTES: a peer trickling a byte every few ms for hours made a record each (64 journal bytes and
 * ~160 bytes of every reader's memory a byte), enough to take the HAR's writer past the heap (docs/capture-format.md).
 */
export const PIECES_TIMED = 10_000;
/** The shortest time a gathered piece of a body past PIECES_TIMED spans. */
export const GATHER_MS = 100;
/** The most bytes a gathered piece holds (a body's bytes the recorder holds in memory). */
export const GATHER_BYTES = 64 * 1024;

const JOURNAL = '.journal';

/** A capture's three paths. */
export interface CapturePaths {
  /** The HAR written at close. */
  out: string;
  /** The journal, present while recording (or after a crash). */
  journal: string;
  /** The body bytes the journal points into. */
  bodies: string;
}

/** The paths of a capture named by its HAR path or its journal's. */
export function journalPaths(outOrJournal: string): CapturePaths {
  const out = outOrJournal.endsWith(JOURNAL) ? outOrJournal.slice(0, -JOURNAL.length) : outOrJournal;
  return { out, journal: `${out}${JOURNAL}`, bodies: `${out}.bodies` };
}
