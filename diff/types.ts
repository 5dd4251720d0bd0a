// The plain data that flows through bb diff: normalized entries, pairs,
// differences and the result. Everything here is JSON-serializable so a
// stage can be replaced or inspected by name (see stages.ts).
import type { NotReplayed } from './not-replayed.js';
import type { TimingReport } from './timing-types.js';


/** A header or query value: one string, or several in wire order when repeated. */
export type MultiValue = string | string[];

/**
 * One Set-Cookie as compared (`response.cookies.NAME`): its value and its
 * attributes under their lower-case names (`expires`, `max-age`, `path`,
 * `domain`, `samesite`, …), a flag attribute (`secure`, `httponly`) as true.
 */
export interface NormalizedSetCookie {
  /** The cookie's value, normalized ("" stays "": an emptied cookie is visible). */
  value: string;
  /** Attributes by lower-case name: their value as written and normalized, or true for a flag. */
  [attribute: string]: string | true;
}

/** A body cut at the body cap, as compared past it (past-cap.ts): where it was cut, its whole size, the hash of the rest. */
export interface PastCap {
  /** Bytes kept (the cap, as content-coded bytes). */
  recorded: number;
  /** The whole body's bytes. */
  size: number;
  /** `_bb.restHash`: the hash of the bytes past `recorded`. */
  hash: string;
}

/** A WebSocket message as compared. */
/** Messages a capture does not list (past MESSAGES_LISTED), as compared: how many, and a digest of their normalized forms in order (normalize/unlisted.ts). */
export interface Unlisted {
  count: number;
  digest: string;
}

/** A gRPC call as compared: messages in order (opcode 2, data decoded), grpc-status and grpc-message. */
export interface NormalizedGrpc {
  messages: NormalizedWsMessage[];
  /** Each direction's messages past the listed, when some are. */
  unlisted?: { send?: Unlisted; receive?: Unlisted };
  /** grpc-status; null when the call ended without one. */
  status: number | null;
  /** grpc-message, when present. */
  message?: string;
}

export interface NormalizedWsMessage {
  /** "send" (client→server), "receive" or "error". */
  type: string;
  /** 1 text, 2 binary, 8 close, 9 ping, 10 pong, -1 error row. */
  opcode: number;
  /** Parsed JSON when the payload parses, else the (normalized) text or base64. */
  data: unknown;
}

/** What is compared for one HAR entry (docs/diff.md "What is compared"). */
export interface NormalizedEntry {
  /** "<page title>/<METHOD> <normalized path>#<n>" (route key in brackets after the path when configured). */
  id: string;
  /** Pairing key: page + method + normalized path + route key (no occurrence, no ordinal numbers). */
  key: string;
  /** "METHOD path": the route, for grouping in reports and `pairing` selectors. */
  route: string;
  /** The compared request. */
  request: {
    method: string;
    path: string;
    query: Record<string, MultiValue>;
    headers: Record<string, MultiValue>;
    /** The Cookie header(s) as name → value (cookies rule; the header is then not in `headers`). */
    cookies?: Record<string, MultiValue>;
    body?: unknown;
    /** A body cut at the cap: compared past it by size and hash (past-cap.ts). */
    truncated?: PastCap;
    /** Chunked or HTTP/2 trailers, lower-case name → value like headers; absent when none came. */
    trailers?: Record<string, MultiValue>;
  };
  /** The compared response (`events` for text/event-stream). */
  response: {
    status: number;
    headers: Record<string, MultiValue>;
    /** Each Set-Cookie by cookie name, several in wire order when one name is set twice (cookies rule; the header is then not in `headers`). */
    cookies?: Record<string, NormalizedSetCookie | NormalizedSetCookie[]>;
    body?: unknown;
    events?: unknown[];
    /** An event stream's events past the listed, when some are. */
    unlisted?: Unlisted;
    /** A body cut at the cap: compared past it by size and hash (past-cap.ts). */
    truncated?: PastCap;
    /** Chunked or HTTP/2 trailers (a gRPC call's too, but for grpc-status and grpc-message, compared as `grpc`); absent when none came. */
    trailers?: Record<string, MultiValue>;
    /** The informational (1xx) heads before the response (100 Continue, 103 Early Hints), in order; absent when none came. */
    informational?: Array<{ status: number; headers: Record<string, MultiValue> }>;
  };
  /** WebSocket connection, for upgrade entries. */
  ws?: {
    messages: NormalizedWsMessage[];
    /** Each direction's messages past those the capture lists: their count and hash (`_bb.unlisted`, `_bb.unlistedHash`). */
    unlisted?: { send?: Unlisted; receive?: Unlisted };
    close?: { code: number | null; reason: string; by: string };
  };
  /** gRPC call: its messages (protobuf decoded with the config's .proto files, else without a schema) and status, compared like WebSocket messages. */
  grpc?: NormalizedGrpc;
  /** Header names in wire order and case: compared only with --header-order. */
  headerOrder?: { request: string[]; response: string[] };
  /** Facts about the entry that are not compared. */
  meta: EntryMeta;
}

/** What a key adds to its entry's route and request line. */
export interface RequestKey {
  /** Shown in brackets after the path (`POST /graphql[CreateItem]`): an operation, a method, a field's or header's value. */
  bracket?: string;
  /** Query parameters the key is made of, `name=value`, shown as the route's query (`GET /socket.io/?transport=websocket`). */
  query?: string[];
  /** Query parameter names the request line leaves out besides the key's own: what the key already says, or per-connection bookkeeping. */
  hide?: string[];
}

/** Not compared: where the entry came from and how to treat it. */
export interface EntryMeta {
  /** Index in log.entries of its file. */
  index: number;
  /** Page title ("" when the entry has no page). */
  page: string;
  /** bb's capture sequence number, when present. */
  seq?: number;
  /** Which bodies were cut at the capture's body cap (never a real difference). */
  truncated?: { request?: boolean; response?: boolean };
  /** Which bodies the producer did not record though there was one (a browser HAR without postData or content text): not compared. */
  notRecorded?: { request?: boolean; response?: boolean };
  /** Spoken over HTTP/2 or later: no connection-specific headers (compare.ts drops them against an HTTP/1.x side). */
  h2?: boolean;
  /** Its client left an event stream before its end (`_bb.aborted: "client"`): a `bb shadow` mirror's or a replay's copy of it is compared as far as this one got (compare-loop.ts). */
  clientLeft?: boolean;
  /** bb's upstream failure code, when the response is bb's own. */
  error?: string;
  /** The entry's route key (normalize/route-keys.ts): what its route and request line show of it. */
  requestKey?: RequestKey;
  /** What the config's key rules and header masks erased in it (normalize/erased.ts notes), when any did: the stores put it on the summary. */
  erased?: string[];
}

/** Kinds of difference (docs/diff.md "What is compared"); `slower` is a route over --timing-budget (docs/timing.md "Failing a build: `--timing-budget R`"). */
export type DifferenceKind = 'changed' | 'added' | 'removed' | 'extra' | 'missing' | 'reordered' | 'slower';

/** How a difference was classified. */
export type DifferenceClass = 'real' | 'known' | 'noise';

/** One difference between the two captures. */
export interface Difference {
  /** Stable id: hash of entry id + path + kind (same difference, same id, run after run). */
  id: string;
  /** What happened to the field, message or entry. */
  kind: DifferenceKind;
  /** Entry id (the old side's, or the new side's for an extra entry). */
  entry: string;
  /** "METHOD path" of the entry, for grouping. */
  route: string;
  /** The normalized request line with its query (`GET /posts?_sort=views`): which call of the route it is. */
  request: string;
  /** Field path, e.g. response.body.items[0].name ("" for a whole entry). */
  path: string;
  /** The path with indices replaced by [] (for grouping and selectors). */
  pattern: string;
  /** Old value (absent for added/extra). */
  old?: unknown;
  /** New value (absent for removed/missing). */
  new?: unknown;
  /** real, known (matched a `known` entry) or noise (differs between two old runs too). */
  class: DifferenceClass;
  /** For known differences: the reason from the config. */
  reason?: string;
  /** Id of the finding this row belongs to (findings stage): one the report lists, the cause for a row of a consequence. */
  finding?: string;
  /** A reordered array item or message: where it moved (not in --json, whose `old`/`new` say "at N: …"). */
  move?: Move;
  /** A real row at a ratified place whose values are not the ratified ones: what the known entry recorded. */
  ratified?: BrokenRatification;
}

/**
 * What a known entry written by `bb known add` records of the changed rows it
 * ratified, per side: the value when every row held the same one (normalized,
 * ordinal numbers dropped), else the shape they shared (diff/ratified.ts).
 * None of them: the entry matches any value.
 */
export interface KnownValues {
  /** The old value every ratified row held. */
  old?: unknown;
  /** The new value every ratified row held. */
  new?: unknown;
  /** Or the shape of the old values ("number", "string", "<UUID>", …). */
  oldShape?: string;
  /** Or the shape of the new values. */
  newShape?: string;
}

/** A known entry whose place a row matched but whose recorded values it did not: the row stays real. */
export interface BrokenRatification extends KnownValues {
  /** Its position in the config's known list. */
  known: number;
  /** Its reason. */
  reason: string;
}

/** Where a reordered item or message sits on each side, and what it is when both sides read alike. */
export interface Move {
  /** Its place among the old side's items. */
  from: number;
  /** Its place among the new side's items. */
  to: number;
  /** Its summary, when the old and new items read the same (a message or item that only moved). */
  item?: string;
}

/**
 * What changed, once (docs/diff.md "Findings"): every difference row of one
 * class and kind with the same field pattern and the same old → new values,
 * across entries and routes; rows whose values vary, per route. Findings
 * that follow from a status change are listed under it (`consequences`).
 */
export interface Finding {
  /** Stable id: a hash of kind, pattern and values (or route), not of the class. */
  id: string;
  class: DifferenceClass;
  kind: DifferenceKind;
  /** Field pattern: indices as [], ordinal numbers dropped ("" for a whole entry). */
  pattern: string;
  /** The old value, when every row has the same one. */
  old?: unknown;
  /** The new value, when every row has the same one. */
  new?: unknown;
  /** Ids of its difference rows. */
  rows: string[];
  /** Entry pairs that have it. */
  entries: number;
  /** Entry pairs of its routes where the field exists on either side (all of them for whole-entry kinds). */
  of: number;
  /** Its routes ("METHOD path"). */
  routes: string[];
  /** True when its routes are every route of the comparison where the field exists (whole-entry kinds: never). */
  everywhere: boolean;
  /** Up to three entries that have it: id and request line. */
  samples: Array<{ id: string; request: string }>;
  /** For known findings: the reason. */
  reason?: string;
  /** A real finding at a ratified place with other values: what was ratified ("was ratified as 201 → 200, now 201 → 500"). */
  ratified?: BrokenRatification;
  /** For a status change: the findings that follow from it on its entries (body, headers, …), folded under it (diff/findings-fold.ts). */
  consequences?: Finding[];
}

/** How two entries (or one unpaired entry) line up. */
export interface Pair {
  /** Entry id (old side's when both exist). */
  id: string;
  /** "METHOD path" of the entry. */
  route: string;
  /** Index in the old file's log.entries, when present. */
  old?: number;
  /** Index in the new file's log.entries, when present. */
  new?: number;
  /** same: paired in order; reordered: found elsewhere in the sequence; missing/extra: one side only. */
  status: 'paired' | 'reordered' | 'missing' | 'extra';
  /** Number of differences found in this pair (all classes). */
  differences: number;
  /** The request line with query (old side's when both exist). */
  request?: string;
  /** Each side's exchange name (`#<seq>`, else `#<index>`). */
  exchange?: { old?: string; new?: string };
}

/** A `known` entry of the config that matched nothing this run. */
export interface StaleKnown {
  /** Its position in the config's known list. */
  index: number;
  /** Its selector and reason, as written. */
  where: string | string[];
  path: string;
  kind?: DifferenceKind;
  reason: string;
}

/** What bb diff found. Plain data; renderText / renderJson turn it into reports. */
export interface DiffResult {
  /** "match": nothing real differs; "diff": at least one real difference (or a stale known entry under --strict-known). */
  verdict: 'match' | 'diff';
  /** 0 match, 1 differences. (2 is an error thrown, never a result.) */
  exitCode: 0 | 1;
  /** The files compared. */
  old: { path: string; entries: number };
  new: { path: string; entries: number };
  /** Counts of differences (rows) by class, and of findings by class. */
  counts: { real: number; known: number; noise: number; pairs: number; findings: { real: number; known: number; noise: number } };
  /** Every entry pair, in old-file order then extras. */
  pairs: Pair[];
  /** What changed, once: real findings first (largest first), then known, then noise. */
  findings: Finding[];
  /** Every difference, in pair order then path order. */
  differences: Difference[];
  /** Known entries that matched nothing (none when `sameBuild`: there they are expected). */
  staleKnown: StaleKnown[];
  /** Both captures are of one build (bb compare --trees old,old): how many known entries matched nothing, as expected. */
  sameBuild?: { knownUnmet: number };
  /** With options.views: both sides of differing pairs, by index in `pairs`, for the HTML report (never in --json). */
  views?: Map<number, PairView>;
  /** With --noise: the second old capture, how many differences it had with the old one, and how many rows of this comparison they hid. */
  noiseRun?: { path: string; differences: number; hidden: NoiseHidden };
  /** Rows hidden by config rules that erase a whole value (`normalize.paths` without a `pattern`, `normalize.keys`, `normalize.headers`), per rule that hid any (nothing disappears silently). */
  hiddenByRules?: RuleHidden[];
  /** With --timing: per-route timing, old → new (docs/timing.md "Reading the report"). */
  timing?: TimingReport;
  /** The new capture is a `bb replay` of the old one: the old entries it did not send, left out of the comparison (not-replayed.ts). */
  notReplayed?: NotReplayed;
  /** Two of a `bb shadow` run's captures: the exchanges a mirror has no answer for (bb's own error answer), left out of the comparison as the live run counts them errors. */
  shadowUnanswered?: number;
}

/** How many rows noise hid (bb diff --noise), in all and by kind. */
export interface NoiseHidden {
  /** Rows classified noise. */
  rows: number;
  /** Of them, by kind (`changed`, `missing`, …). */
  byKind: Partial<Record<DifferenceKind, number>>;
}

/** A config rule that erases whole values and hid rows: the values it replaced or dropped differed between the sides. */
export interface RuleHidden {
  /** The rule, as the config names it (`normalize.paths[0]`, `normalize.keys[1]`, `normalize.headers[0]`). */
  rule: string;
  /** A paths rule's `where`, when it has one. */
  where?: string;
  /** A paths rule's `path`. */
  path?: string;
  /** A keys rule's `key`. */
  key?: string;
  /** A keys rule's `pattern` (over key names). */
  pattern?: string;
  /** A headers rule's header name (lower case). */
  header?: string;
  /** Rows it hid: places in paired entries where the erased values differed, or, for a rule that drops the field (`ignore`), were on one side only. */
  rows: number;
}

/** The compared content of one side of a pair, as the HTML view shows it. */
export type EntryView = Pick<NormalizedEntry, 'request' | 'response' | 'ws' | 'grpc'>;

/** Both sides of a pair (either may be absent for missing / extra entries). */
export interface PairView {
  /** The old entry (rendered: ordinal placeholders numbered). */
  old?: EntryView;
  /** The new entry. */
  new?: EntryView;
  /** How WebSocket messages line up (the run's pairing.wsOrder). */
  wsOrder?: 'direction' | 'total';
}
