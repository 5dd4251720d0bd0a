// Server-issued values (docs/diff.md "Issued values", docs/replay.md
// "Correlation: following the server's ids"): what a response, an event or a
// server WebSocket message hands the client that the client may send back
// later. A value is a token of 4+ characters (a redacted placeholder counts as
// one token) or an integer of 4+ digits, found at a place: a header and token
// index, a cookie name, a JSON path, a gRPC message's field path (read
// without a schema), an HTML page's element and attribute (html.ts). A
// client's gRPC message is rewritten here too, its length prefixes with it.
// The same function reads a capture and a target's live responses, so a place
// names the same slot on both sides. `bb diff` (bound.ts), `bb replay`
// (scenario/replay/correlate.ts) and `bb shadow` (counterparts.ts) all ask
// this file what counts as issued and where it is.
//
// Bodies that are not plain JSON still count: a length or packet-type prefix
// before the JSON (Engine.IO's `0{"sid":…}`, Socket.IO's `42[…]`, packets
// joined by \x1e) is skipped, and a short plain-text body is a token list.
// Prose never is (prose.ts): a JSON string, header value, text body or event
// that is an error message, a sentence or markup issues nothing.
import { BoundedMemo, isEventStreamMedia, isFormMedia, isTextualMedia, pairValue } from '../../core/index.js';
import { decodeProtobuf, PLACEHOLDER_SOURCE, rewriteProtobuf, sseEventsOf, type HarEntry, type HarGrpcMessage, type HarRequest } from '../../capture/index.js';
import { isProse } from './prose.js';
import { base64Runs, ID_KEY, lettersReadRandom, readsAsPath } from '../normalize/shapes.js';
import { parseJsonPrefix } from './json-prefix.js';
import { htmlValues, isHtml } from './html.js';
import { isXml, xmlValues } from './xml.js';

/**
 * The start of an answer, or of a stream's message, that binding reads live (bb shadow's relay keeps it of the
 * primary's answer; a longer stream message, on the relay or from bb replay's target, binds nothing). Bytes.
 */
export const BIND_READ_BYTES = 256 * 1024;

/** What binding reads of an answer once decoded (content-coding undone): its start as far as this, in bytes. */
export const BIND_DECODED_BYTES = 16 * BIND_READ_BYTES;

/** One value a server issued, at its place. */
export interface IssuedValue {
  /** Where in the response: "header:location#0~2", "cookie:sid", "body:$.id~0", "ws[3]:$.cursor". */
  place: string;
  /** The value as it was on the wire (a placeholder for a redacted secret). */
  value: string;
}

/** A response as the extractor reads it: the capture's or the target's, same shape. */
export interface ResponseView {
  /** Headers in order (any case; duplicates kept). */
  headers: ReadonlyArray<{ name: string; value: string }>;
  /** The decoded body as text, when it is text. */
  text?: string;
  /** Data of each server-sent event, in order. */
  events?: readonly string[];
  /** Each server-sent event's `id:` field, in order ('' for none): a reconnecting client sends the last one back in Last-Event-ID. */
  eventIds?: readonly string[];
  /** The text is the body's start only (bb shadow keeps 256 KiB for binding): a JSON body is read up to the cut (json-prefix.ts). */
  truncated?: boolean;
  /** A gRPC answer's messages in order, decompressed as the capture holds them; undefined for one that cannot be read (cut short, kept compressed). */
  grpc?: ReadonlyArray<Uint8Array | undefined>;
}

/**
 * Tokens: maximal runs of characters ids are made of. The separators are
 * those of URLs, cookies, JSON and prose; `-`, `_`, `.` and `~` stay inside
 * (UUIDs, JWTs, prefixed ids such as session_…). A percent-escape is a
 * separator whole, matched as a 3-character run that is never a value: in
 * URL-encoded JSON (`variables=%7B%22id%22%3A%221042%22%7D`, a GraphQL GET)
 * or a list (`ids=1042%2C1043`) the ids are tokens of their own, not glued
 * to the escape's hex digits (`221042`, `2C1043`).
 */
const TOKEN = new RegExp(`${PLACEHOLDER_SOURCE}|${/%[0-9A-Fa-f]{2}|[^\s"'`/?&=;,{}[\]()<>:+#\\|@!$*^%]+/.source}`, 'g');
/** A character TOKEN separates at (its last alternative's class, inverted): a text with none is one token whole. */
const SEPARATOR = /[\s"'`/?&=;,{}[\]()<>:+#\\|@!$*^%]/;

/** Whole tokens only below this length are taken; longer runs (base64 blobs) too, up to a bound. */
const MIN_LENGTH = 4;
const MAX_LENGTH = 4096;

/** A short plain-text body is a list of tokens; past this it is prose or data, not a token. */
const MAX_PLAIN_TEXT = 4096;

/** True when a token can be a server-issued value. */
function isCandidate(token: string): boolean {
  if (token.length < MIN_LENGTH || token.length > MAX_LENGTH) return false;
  // Decimal fractions and versions of a number ("12.50") are measurements, not ids.
  if (/^-?\d+\.\d+$/.test(token)) return false;
  return true;
}

/**
 * A value a server made rather than a word of its protocol: it holds a digit, or capitals past its
 * first letter, or 8+ letters of one case that do not read as words (lettersReadRandom: an id of a
 * lower-case alphabet). `websocket` in an Engine.IO handshake's upgrades, sent back as
 * `?transport=websocket`, is the protocol's word, compared as written; `Xk9fQ2`, `4821`, `aB3_x-…`
 * and `kqzvmxab` are made.
 */
export function madeNotWord(v: string): boolean {
  return /\d/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v.slice(1))) || lettersReadRandom(v);
}

/**
 * The candidate tokens of a text (placedTokens): its tokens and the base64 values it holds whole (base64Runs: a
 * cursor `4witsO+F3O6FXo0Vt+i6+x/n`, also as a URL carries it back, `4witsO%2BF3O6FXo0Vt%2Bi6%2Bx%2Fn`, each the
 * value with `+` and `/`). The separators would cut such a value into parts whose number and lengths vary from one random
 * value to the next, so only the whole binds the same way on both sides; the parts stay, so a value that is a path
 * of ids still binds by its ids. `target`: the text is a request's target (targetTokens), whose `/` is its path's.
 */
export function tokensOf(text: string, target = false): string[] {
  return placedTokens(text, target).tokens;
}

/**
 * tokensOf's tokens and how many of them are tokens (the rest are base64 values read whole). A text that is one
 * value is its own first token, its parts after (when it has more than itself): so a random cursor is at `~0`
 * whether or not it drew a `+` or `/`, as a plain id is. A value read whole inside a longer text, or a text that
 * reads as a path, comes after the tokens, at `~bj` (its index among those), so whether there is one does not move
 * the places of the tokens (bb shadow and bb replay pair values by place).
 */
export function placedTokens(text: string, target = false): { tokens: string[]; pieces: number } {
  // Most JSON string values are one token (an id, a name, a tag): no separator, so no placeholder or escape either,
  // and no base64 run but the text itself, which it already is. Answered without the match and the runs (the
  // binding pass asks this of every string of every answer).
  if (!SEPARATOR.test(text)) return isCandidate(text) ? { tokens: [text], pieces: 1 } : { tokens: [], pieces: 0 };
  // match (global) gives the strings without a match object each: the cheaper walk, measured.
  const all = text.match(TOKEN);
  // A new array each time: callers append to tokensOf's.
  if (!all) return { tokens: [], pieces: 0 };
  const tokens: string[] = [];
  for (const t of all) if (isCandidate(t)) tokens.push(t);
  const runs = base64Runs(text, MAX_LENGTH, target);
  if (runs.length === 0) return { tokens, pieces: tokens.length };
  const first = runs[0]!;
  // A path is read whole too, after its tokens: a build's path with a `.` in it is not one value, and its tokens
  // must keep their places.
  if (runs.length === 1 && first.start === 0 && first.end === text.length && !first.encoded && !readsAsPath(text)) {
    if (!(tokens.length === 1 && tokens[0] === first.value)) tokens.unshift(first.value);
    return { tokens, pieces: tokens.length };
  }
  const pieces = tokens.length;
  for (const run of runs) tokens.push(run.value);
  return { tokens, pieces };
}

/**
 * Adds a text's tokens (placedTokens) to a sink, each at `at` and its place in the text: `~k` for a token, `~bj` for
 * a value read whole inside it. `keep`: which tokens to add (a markup document's made ones only).
 */
function addPlaced(out: ValueSink, at: string, placed: { readonly tokens: readonly string[]; readonly pieces: number }, keep?: (token: string) => boolean): void {
  const { tokens, pieces } = placed;
  for (let k = 0; k < tokens.length; k++) {
    if (keep && !keep(tokens[k]!)) continue;
    out.add(out.places ? `${at}${k < pieces ? `~${k}` : `~b${k - pieces}`}` : '', tokens[k]!);
  }
}

/** The candidate tokens of a request's target (path and query): a `/` alone never shows a base64 value there. */
export function targetTokens(target: string): string[] {
  return tokensOf(target, true);
}

/** The made tokens of a request's path, its query left out: where a REST resource's id stands (`/products/3001`). */
export function pathTokens(req: SentRequest): string[] {
  return targetTokens(req.target.split('?')[0]!).filter(madeNotWord);
}

/** A request's target with what `map` has a value for replaced, each new value percent-encoded (a `+` in it is no space, a `/` no path). */
export function rewriteTarget(target: string, map: { get(token: string): string | undefined }): { text: string; uses: string[] } {
  return rewriteTokens(target, map, encodeURIComponent, true);
}

/**
 * Replaces what `map` has a value for in `text`: a standard-base64 value whole (base64Runs), else whole tokens;
 * `encode` turns a new value into the text's syntax. A value that was written percent-encoded is written back so
 * when no `encode` is given (its `+`, `/` and `=` as escapes: a `+` in a query is a space).
 */
export function rewriteTokens(text: string, map: { get(token: string): string | undefined }, encoding?: ValueEncoding, target = false): { text: string; uses: string[] } {
  const uses: string[] = [];
  // A lazy encoding (textEncoding) is chosen at the first value written: a text that holds none is not parsed.
  let lazy = typeof encoding === 'object' ? encoding.lazy : undefined;
  let chosen = typeof encoding === 'function' ? encoding : undefined;
  const encoder = () => {
    if (lazy) [chosen, lazy] = [lazy(), undefined];
    return chosen;
  };
  const tokens = (part: string) =>
    part.replace(TOKEN, (token) => {
      const next = map.get(token);
      if (next === undefined) return token;
      uses.push(token);
      const encode = encoder();
      return encode ? encode(next) : next;
    });
  const runs = base64Runs(text, MAX_LENGTH, target);
  if (runs.length === 0) return { text: tokens(text), uses };
  let out = '';
  let from = 0;
  for (const run of runs) {
    const next = map.get(run.value);
    if (next === undefined) continue;
    out += tokens(text.slice(from, run.start));
    uses.push(run.value);
    const encode = encoder();
    out += encode ? encode(next) : run.encoded ? next.replace(/[+/=]/g, (c) => encodeURIComponent(c)) : next;
    from = run.end;
  }
  return { text: out + tokens(text.slice(from)), uses };
}

/** Parses JSON text, or JSON after a short non-JSON prefix (Engine.IO/Socket.IO packet types, lengths). */
export function parseLooseJson(text: string): { value: unknown } | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const start = trimmed.search(/[[{]/);
  // A prefix longer than a packet header is prose with a brace in it.
  if (start < 0 || start > 16) return undefined;
  try {
    return { value: JSON.parse(trimmed.slice(start)) };
  } catch {
    return undefined;
  }
}

/** A value as a JSON string's characters (a value replaced inside a JSON text). */
export const jsonEscape = (v: string): string => JSON.stringify(v).slice(1, -1);

/**
 * How rewriteTokens writes a new value into a request's body or a client message: JSON-escaped in JSON,
 * URL-encoded in a form, else as it is. (A request's target takes encodeURIComponent: a value with a `+` or `/`,
 * a base64 cursor, must not reach the server as a space or a path.) bb replay and bb shadow's mirror both ask.
 */
export function textEncoding(text: string, contentType?: string): ValueEncoding {
  // Chosen only once a value is written (rewriteTokens): most mirrored bodies and messages hold none, and a JSON
  // parse of each was the relay's work.
  return { lazy: () => (parseLooseJson(text) !== undefined ? jsonEscape : isFormMedia(contentType) ? encodeURIComponent : undefined) };
}

/** How rewriteTokens writes a new value: as a function says, or as one chosen when the first value is written. */
export type ValueEncoding = ((value: string) => string) | { readonly lazy: () => ((value: string) => string) | undefined };

/**
 * Where extracted values go. `places` false: the values alone, and no place
 * string is built (the diff's binding asks only which values, and building
 * every JSON path was most of its cost).
 */
interface ValueSink {
  places: boolean;
  add(place: string, value: string): void;
  /**
   * When set, a string none of whose tokens it wants is passed over before
   * the prose test: adding those tokens would change nothing for the caller
   * (the diff's binding wants only values its client sends later).
   */
  wants?: (value: string) => boolean;
  /** When set, told of each value a JSON body issued under a key that says it is an id (`id`, `productId`, `order_id`). */
  idKeyed?: (value: string) => void;
  /** The diff's binding: a value under a key that names a quantity (quantityKey) is not issued there. */
  quantities?: 'skip';
}

/** The key a JSON place ends with, and its items' indices if it is an array's (`body:$.productIds[0]~0`). */
const PLACE_KEY = /\.([^.[\]~]{1,256})((?:\[\d{1,9}\])*)(?:~b?\d{1,9})?$/;

/** An array's key says what each item is: `productIds` → `productId`. */
const singular = (key: string) => (key.endsWith('s') ? key.slice(0, -1) : key);

/** The JSON key an issued value's place (IssuedValue.place) ends with, an array's by its items (`productIds[0]` → `productId`); undefined for a header's or a message's place. */
function keyOfPlace(place: string): string | undefined {
  const m = PLACE_KEY.exec(place);
  return m === null ? undefined : m[2] ? singular(m[1]!) : m[1]!;
}

/** Whether an issued value's place is a JSON field whose key says id (`id`, `productId`, `order_ids[0]`). */
export function placeSaysId(place: string): boolean {
  const key = keyOfPlace(place);
  return key !== undefined && ID_KEY.test(key);
}

/** What a key's last word says its value is an amount or a measure of: the build computes it, it does not make it up. */
const QUANTITY_WORDS = ['price', 'cost', 'amount', 'total', 'subtotal', 'balance', 'fee', 'tax', 'discount', 'cents', 'count', 'quantity', 'qty', 'limit', 'size', 'offset', 'stock', 'score', 'rating', 'weight', 'height', 'width', 'length', 'percent', 'capacity'];
// The word alone or after `_`/`-` in any case (`price`, `price_cents`, `MAX-SIZE`), or capitalized after a lower-case
// letter or digit (`maxPageSize`, `unitPrice`): `account` and `checksum` name no quantity.
const QUANTITY_SEPARATED = new RegExp(`(?:^|[_-])(?:${QUANTITY_WORDS.join('|')})s?$`, 'i');
const QUANTITY_CAMEL = new RegExp(`[a-z0-9](?:${QUANTITY_WORDS.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('|')})s?$`);

/**
 * Whether a JSON key names a quantity (`price_cents`, `maxPageSize`, `limit`, `itemCount`). `bb diff` binds no value
 * issued under one (docs/diff.md "Issued values"): a price the client echoes into its cart is the build's answer,
 * and a new build's other price must show where it is answered and where it is echoed, not bind to the old one and
 * hide. Without a second run (--noise) to say which echoed values two runs answer alike, the key is the only
 * witness. bb replay and bb shadow's relay still send each target its own (the client echoes what it was given).
 */
export function quantityKey(key: string): boolean {
  return quantityKeys.get(key) ?? quantityKeys.set(key, QUANTITY_SEPARATED.test(key) || QUANTITY_CAMEL.test(key));
}

/** Keys repeat (every answer of a route has the same): each asked once. */
const quantityKeys = new BoundedMemo<string, boolean>(10_000);

/** Whether an issued value's place is a JSON field whose key names a quantity (quantityKey). */
export function placeSaysQuantity(place: string): boolean {
  const key = keyOfPlace(place);
  return key !== undefined && quantityKey(key);
}

/** The string's tokens, or none when the sink wants none of them (then they need no prose test). */
function tokensFor(text: string, out: ValueSink, target = false): { readonly tokens: readonly string[]; readonly pieces: number } {
  const placed = placedTokens(text, target);
  return out.wants && !placed.tokens.some(out.wants) ? NO_TOKENS : placed;
}

/** No tokens, for tokensFor's callers (which only read it). */
const NO_TOKENS: { readonly tokens: readonly string[]; readonly pieces: number } = { tokens: [], pieces: 0 };

/** A sink that collects IssuedValues with their places. */
function collect(out: IssuedValue[]): ValueSink {
  return { places: true, add: (place, value) => out.push({ place, value }) };
}

/** The values in a JSON value: string tokens and 4+ digit integers, by JSON path. */
function jsonValues(value: unknown, prefix: string, out: ValueSink): void {
  const places = out.places;
  const ids = out.idKeyed;
  const quantities = out.quantities === 'skip';
  const walk = (v: unknown, path: string, depth: number, key: string): void => {
    // Bounded depth: captured content is hostile input.
    if (depth > 64) return;
    if (typeof v === 'string') {
      // Shorter than a token: nothing to find (and no prose test to run).
      if (v.length < MIN_LENGTH) return;
      const placed = tokensFor(v, out);
      // A sentence or an error message in a field is written for people, not issued; nor, for the diff, a quantity.
      if (placed.tokens.length === 0 || isProse(v) || (quantities && quantityKey(key))) return;
      addPlaced(out, places ? `${prefix}${path}` : '', placed);
      if (ids && ID_KEY.test(key)) for (const t of placed.tokens) ids(t);
    } else if (typeof v === 'number') {
      if (!Number.isInteger(v) || Math.abs(v) < 1000 || (quantities && quantityKey(key))) return;
      out.add(places ? `${prefix}${path}` : '', String(v));
      if (ids && ID_KEY.test(key)) ids(String(v));
    } else if (Array.isArray(v)) {
      // An array's items stand under its key (`productIds: [3001, 3002]` is ids too).
      const itemKey = ids || quantities ? singular(key) : '';
      for (let i = 0; i < v.length; i++) walk(v[i], places ? `${path}[${i}]` : '', depth + 1, itemKey);
    } else if (v !== null && typeof v === 'object') {
      for (const k in v) if (Object.hasOwn(v, k)) walk((v as Record<string, unknown>)[k], places ? `${path}.${k}` : '', depth + 1, k);
    }
  };
  walk(value, '$', 0, '');
}

/** The values of a body or message text: JSON (with a prefix), packets split by \x1e, or a short token list. */
function textValues(text: string, prefix: string, out: ValueSink, truncated = false): void {
  const packets = text.includes('\x1e') ? text.split('\x1e') : [text];
  packets.forEach((packet, p) => {
    const at = !out.places ? '' : packets.length > 1 ? `${prefix}[${p}]:` : `${prefix}:`;
    // A text cut short (its last packet) is read up to the cut, only once it did not parse whole.
    const json = parseLooseJson(packet) ?? (truncated && p === packets.length - 1 ? parseJsonPrefix(packet) : undefined);
    if (json) jsonValues(json.value, at, out);
    else if (packet.length <= MAX_PLAIN_TEXT) {
      const placed = tokensFor(packet, out);
      if (placed.tokens.length && !isProse(packet)) addPlaced(out, at, placed);
    }
  });
}

/** The cookie a Set-Cookie value sets: its name and value. */
export function setCookiePair(value: string): { name: string; value: string } | undefined {
  const pair = value.split(';', 1)[0]!;
  const eq = pair.indexOf('=');
  if (eq <= 0) return undefined;
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim() };
}

/** Headers whose values are not issued to the client for later use (or are the body's own framing). */
const NOT_ISSUED = new Set(['date', 'content-length', 'content-type', 'connection', 'keep-alive', 'transfer-encoding', 'vary', 'server', 'age', 'expires', 'cache-control', 'content-encoding', 'accept-ranges', 'x-bb-error']);

/** Headers whose value is a URL the client may go to next. */
const URL_HEADERS = new Set(['location', 'content-location']);

/**
 * Last-Modified is issued whole: a client revalidates with the date it was
 * given (If-Modified-Since, If-Unmodified-Since, If-Range: RFC 9110 §13.1.3-5),
 * and a target whose copy is newer answers a 200 for the primary's date where
 * the primary answered 304. A date holds spaces and colons, so it is one
 * value, not tokens; If-Range may carry an ETag instead (then its tokens).
 */
const ISSUED_WHOLE = 'last-modified';
const SENT_WHOLE = new Set(['if-modified-since', 'if-unmodified-since', 'if-range']);

/** A request header's value with the values `map` has a replacement for: a conditional date whole, any other by tokens (rewriteTokens). */
export function rewriteHeaderValue(name: string, value: string, map: { get(token: string): string | undefined }): { text: string; uses: string[] } {
  const whole = SENT_WHOLE.has(name.toLowerCase()) ? map.get(value) : undefined;
  return whole === undefined ? rewriteTokens(value, map) : { text: whole, uses: [value] };
}

/** Whether two lists of texts (events, their ids) are equal; absent is empty. */
function sameTexts(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i]);
}

/**
 * Whether two responses issue the same values at the same places, decided
 * without reading the values: the same body text, the same events, and the
 * same headers of those responseValues reads (in order). Binding two such
 * answers binds nothing, so `bb shadow` skips parsing them (most answers of
 * a healthy candidate are the primary's, byte for byte).
 */
export function sameIssued(a: ResponseView, b: ResponseView): boolean {
  if (a.text !== b.text) return false;
  if (!sameTexts(a.events, b.events) || !sameTexts(a.eventIds, b.eventIds)) return false;
  if (!sameMessages(a.grpc ?? [], b.grpc ?? [])) return false;
  const ah = issuingHeaders(a);
  const bh = issuingHeaders(b);
  return ah.length === bh.length && ah.every((h, i) => h.name === bh[i]!.name && h.value === bh[i]!.value);
}

function sameMessages(a: ReadonlyArray<Uint8Array | undefined>, b: ReadonlyArray<Uint8Array | undefined>): boolean {
  return a.length === b.length && a.every((m, i) => m === b[i] || (m !== undefined && b[i] !== undefined && Buffer.compare(m, b[i]!) === 0));
}

// The headers responseValuesTo reads values from, names lower-cased.
function issuingHeaders(res: ResponseView): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = [];
  for (const { name, value } of res.headers) {
    const lower = name.toLowerCase();
    if (!lower.startsWith(':') && !NOT_ISSUED.has(lower)) out.push({ name: lower, value });
  }
  return out;
}

/** Every value a response issues, in order, each at its place. */
export function responseValues(res: ResponseView): IssuedValue[] {
  const out: IssuedValue[] = [];
  responseValuesTo(res, collect(out));
  return out;
}

/** Every value a response issues, in order, without places (what the diff's binding asks: none under a quantity key); strings with no token `wants` wants may be skipped. */
export function eachResponseValue(res: ResponseView, f: (value: string) => void, wants?: (value: string) => boolean, idKeyed?: (value: string) => void): void {
  responseValuesTo(res, { places: false, add: (_place, value) => f(value), quantities: 'skip', ...(wants ? { wants } : {}), ...(idKeyed ? { idKeyed } : {}) });
}

function responseValuesTo(res: ResponseView, out: ValueSink): void {
  const seen = new Map<string, number>();
  for (const { name, value } of res.headers) {
    const lower = name.toLowerCase();
    if (lower.startsWith(':') || NOT_ISSUED.has(lower)) continue;
    const n = seen.get(lower) ?? 0;
    seen.set(lower, n + 1);
    if (lower === ISSUED_WHOLE) {
      out.add(`header:${lower}#${n}`, value);
      continue;
    }
    if (lower === 'set-cookie') {
      const pair = setCookiePair(value);
      // A cookie value is issued whole: it goes back whole in Cookie.
      if (pair && pair.value.length >= MIN_LENGTH) out.add(`cookie:${pair.name}`, pair.value);
      continue;
    }
    // A Location is a request's target to be: its `/` is its path's (targetTokens).
    const placed = tokensFor(value, out, URL_HEADERS.has(lower));
    if (placed.tokens.length && !isProse(value)) addPlaced(out, out.places ? `header:${lower}#${n}` : '', placed);
  }
  if (res.text !== undefined) {
    const type = pairValue(res.headers, 'content-type');
    if (isHtml(res.text, type)) pageValues(res.text, out);
    else if (isXml(res.text, type)) documentValues(xmlValues(res.text), 'xml', out);
    else textValues(res.text, 'body', out, res.truncated === true);
  }
  res.events?.forEach((data, i) => textValues(data, out.places ? `sse[${i}]` : '', out));
  // An event's id is issued as a header value is: by tokens (Last-Event-ID carries it back, https://html.spec.whatwg.org/multipage/server-sent-events.html#the-last-event-id-header).
  res.eventIds?.forEach((id, i) => addPlaced(out, out.places ? `sse[${i}]@id` : '', tokensFor(id, out)));
  res.grpc?.forEach((m, i) => m && protoValues(m, out.places ? `grpc[${i}]:` : '', out));
}

/**
 * The values an HTML page issues: made tokens (madeNotWord: a CSRF token, an
 * id in a link) of its hidden inputs, metas, links and form actions
 * (html.ts), at `html:input[authenticity_token]~0`, `html:a#3@href~1`. The
 * page's words are prose, and so are its attributes' words.
 */
function pageValues(text: string, out: ValueSink): void {
  documentValues(htmlValues(text), 'html', out);
}

/** The made tokens (madeNotWord) of a markup document's values (an HTML page's, an XML document's: xml.ts), at `kind:place~k`; words are prose. */
function documentValues(values: Array<{ place: string; value: string }>, kind: string, out: ValueSink): void {
  for (const { place, value } of values) {
    // A link's href and a form's action are targets to be (targetTokens).
    const placed = tokensFor(value, out, place.endsWith('@href') || place.endsWith('@action'));
    if (placed.tokens.length === 0 || isProse(value)) continue;
    addPlaced(out, out.places ? `${kind}:${place}` : '', placed, madeNotWord);
  }
}

/**
 * The values of a protobuf message (a gRPC message), read without a schema
 * as the diff reads it (capture/protobuf.ts: field numbers as keys): string
 * fields' tokens and 4+ digit integers, by path (`$.1`, `$.3.2[0]`), as a
 * JSON body's.
 */
function protoValues(bytes: Uint8Array, prefix: string, out: ValueSink): void {
  const message = decodeProtobuf(bytes);
  if (message) jsonValues(message, prefix, out);
}

/** The values a server's gRPC message issues, in order, without places; strings with no token `wants` wants may be skipped. */
export function eachProtoValue(bytes: Uint8Array, f: (value: string) => void, wants?: (value: string) => boolean): void {
  protoValues(bytes, '', { places: false, add: (_place, value) => f(value), ...(wants ? { wants } : {}) });
}

/** The candidate values a client's gRPC message carries: its string fields' tokens and its 4+ digit integers (as requestTokens reads a JSON body). */
export function protoTokens(bytes: Uint8Array): string[] {
  const message = decodeProtobuf(bytes);
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) return;
    if (typeof v === 'string') for (const t of tokensOf(v)) out.push(t);
    else if (typeof v === 'number') {
      if (Number.isInteger(v) && Math.abs(v) >= 1000) out.push(String(v));
    } else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v !== null && typeof v === 'object') for (const key in v) if (Object.hasOwn(v, key)) walk((v as Record<string, unknown>)[key], depth + 1);
  };
  if (message) walk(message, 0);
  return out;
}

/**
 * A client's gRPC message with the values `map` has a replacement for put in
 * their stead: whole tokens of string fields, integers (a varint id) whose
 * replacement is an integer too; the length prefixes around them follow
 * (capture/protobuf.ts rewriteProtobuf). `bytes` itself when nothing changed.
 */
export function rewriteProtoMessage(bytes: Uint8Array, map: { get(token: string): string | undefined }): { bytes: Uint8Array; uses: string[] } {
  const uses: string[] = [];
  const next = rewriteProtobuf(bytes, {
    text: (s) => {
      const r = rewriteTokens(s, map);
      uses.push(...r.uses);
      return r.uses.length ? r.text : undefined;
    },
    varint: (v) => {
      if (v < 1000n) return undefined;
      const key = v.toString();
      const value = map.get(key);
      if (value === undefined || !/^\d{1,20}$/.test(value)) return undefined;
      uses.push(key);
      return BigInt(value);
    },
  });
  return { bytes: next ?? bytes, uses };
}

/** The values a recorded gRPC call's client messages carry, in order (what its client may have sent back). */
export function grpcSentTokens(entry: HarEntry): string[] {
  const out: string[] = [];
  for (const m of entry._grpcMessages ?? []) {
    const bytes = m.type === 'send' ? grpcMessageBytes(m) : undefined;
    if (bytes) for (const t of protoTokens(bytes)) out.push(t);
  }
  return out;
}

/** A recorded gRPC message's bytes as the capture holds them; undefined when cut short or kept compressed (nothing in it is read). */
export function grpcMessageBytes(m: HarGrpcMessage): Buffer | undefined {
  return m._bb?.truncated === undefined && m._bb?.undecoded === undefined ? Buffer.from(m.data, 'base64') : undefined;
}

/** The values a server WebSocket message (the r-th the server sent) issues. */
export function messageValues(text: string, r: number): IssuedValue[] {
  const out: IssuedValue[] = [];
  textValues(text, `ws[${r}]`, collect(out));
  return out;
}

/**
 * The values a stream's r-th server message issues: a WebSocket text message or an event's data (text), or a gRPC
 * message (bytes, at `grpc[r]:`, the places a recorded call's answer names: recordedResponse).
 */
export function streamMessageValues(message: string | Uint8Array, r: number): IssuedValue[] {
  if (typeof message === 'string') return messageValues(message, r);
  const out: IssuedValue[] = [];
  protoValues(message, `grpc[${r}]:`, collect(out));
  return out;
}

/** The values a server WebSocket message issues, in order, without places (as the diff's binding asks: none under a quantity key); strings with no token `wants` wants may be skipped. */
export function eachMessageValue(text: string, f: (value: string) => void, wants?: (value: string) => boolean): void {
  textValues(text, '', { places: false, add: (_place, value) => f(value), quantities: 'skip', ...(wants ? { wants } : {}) });
}

/** The view of a recorded response the extractor reads: headers, a textual body decoded, an event stream's data, or a gRPC call's server messages. */
export function recordedResponse(entry: HarEntry): ResponseView {
  const res = entry.response;
  const headers = res?.headers ?? [];
  const ct = pairValue(headers, 'content-type') ?? res?.content?.mimeType;
  const c = res?.content;
  if (isEventStreamMedia(ct)) {
    const events = sseEventsOf(entry);
    return { headers, events: events.map((e) => e.data), eventIds: events.map((e) => e.eventId ?? '') };
  }
  // A gRPC call's answer is its messages (the capture split them: capture/grpc.ts).
  if (entry._grpcMessages) return { headers, grpc: entry._grpcMessages.filter((m) => m.type === 'receive').map(grpcMessageBytes) };
  let text: string | undefined;
  if (c?.text !== undefined && (ct === undefined || ct === '' || isTextualMedia(ct))) text = c.encoding === 'base64' ? Buffer.from(c.text, 'base64').toString('utf8') : c.text;
  return { headers, ...(text !== undefined ? { text } : {}) };
}

/** A request as the client sent it, for what it carries back: target (path and query), headers in order, body text. */
export interface SentRequest {
  /** Path and query as the client addressed them. */
  target: string;
  /** Headers in order (name, value). */
  headers: ReadonlyArray<readonly [string, string]>;
  /** The body as text (base64 bodies carry no tokens). */
  body?: { text: string; base64: boolean };
}

/** The values of every Cookie header's pairs. */
function cookieValues(headers: SentRequest['headers']): string[] {
  const out: string[] = [];
  for (const [n, v] of headers) {
    if (n.toLowerCase() !== 'cookie') continue;
    for (const part of v.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0) out.push(part.slice(eq + 1).trim());
    }
  }
  return out;
}

/** Every candidate value a request carries (tokens of URL, headers, body; whole cookie values). */
export function requestTokens(parts: SentRequest): string[] {
  const out = targetTokens(parts.target);
  for (const [n, v] of parts.headers) {
    const lower = n.toLowerCase();
    if (SENT_WHOLE.has(lower)) out.push(v);
    if (lower !== 'cookie') for (const t of tokensOf(v)) out.push(t);
  }
  const cookies = cookieValues(parts.headers);
  out.push(...cookies, ...tokensOf(cookies.join(' ')));
  if (parts.body && !parts.body.base64) for (const t of tokensOf(parts.body.text)) out.push(t);
  return out;
}

/** A recorded request as sent: its target without scheme and authority, its headers (HTTP/2 pseudo-headers aside), its body or form fields. */
export function sentRequest(req: HarRequest): SentRequest {
  const target = req.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split('#')[0]!;
  const headers = (req.headers ?? []).filter((h) => !h.name.startsWith(':')).map((h): [string, string] => [h.name, h.value]);
  const pd = req.postData;
  const body = pd?.text !== undefined ? { text: pd.text, base64: pd._encoding === 'base64' } : pd?.params?.length ? { text: pd.params.map((p) => `${p.name}=${p.value ?? ''}`).join('&'), base64: false } : undefined;
  return { target, headers, ...(body ? { body } : {}) };
}
