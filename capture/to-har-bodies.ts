// Recorded body bytes → HAR content and postData: the slices gathered,
// content codings undone, text or base64, secrets redacted, event streams
// parsed into events. Split from to-har.ts (the entry's shape) because bodies
// are their own concern; still pure, bytes come through `readBody`.
import type { BbEntryExt, HarContent, HarEventSourceMessage, HarPostData, HarResponse } from './har.js';
import type { BodyRecord, BodySlice } from './journal.js';
import { bodyText, decodeContent, type DecodeLimits } from './body.js';
import { EventStreamParser, isBinaryMedia, isEventStreamMedia, isFormMedia, isJsonLinesMedia, isJsonMedia, isTextualMedia, mediaType } from '../core/index.js';
import { headerValue, parseParams } from './http-parts.js';
import type { Redactor } from './redact.js';
import { multipartBoundary, redactMultipart } from './redact-raw.js';
import { grpcMedia } from './grpc.js';
import { redactGrpcBody } from './grpc-redact.js';
import { MESSAGES_LISTED } from './options.js';

/** What reading an exchange's bodies needs. */
export interface BodyContext {
  /** Reads recorded bytes; returns fewer bytes when they were lost (recording error). */
  readBody(slice: BodySlice): Buffer;
  /** Redacts values; absent with --no-redact. */
  redactor?: Redactor;
  /** The most bytes a body decodes to before it is kept as sent (DECODED_BODY_CAP when absent). */
  maxDecoded?: number;
}

/** Concatenates recorded slices; notes bytes lost to a recording error. */
export function gather(chunks: BodySlice[], ctx: BodyContext, notes: string[]): { bytes: Buffer; recorded: number; wire: number } {
  const parts: Buffer[] = [];
  let recorded = 0;
  let wire = 0;
  let lost = 0;
  for (const c of chunks) {
    wire += c.w;
    if (c.n === 0) continue;
    const b = ctx.readBody(c);
    lost += c.n - b.length;
    recorded += c.n;
    parts.push(b);
  }
  if (lost > 0) notes.push(`${lost} recorded body bytes were lost to a recording error`);
  return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), recorded, wire };
}

/**
 * How far a recorded body decodes: to the capture's cap; past it a whole body is kept as sent (compared by its bytes,
 * never by a start that would hide what follows), one cut at the body cap keeps its decoded start (it is a start).
 */
function decodeLimits(ctx: BodyContext, truncated: boolean): DecodeLimits {
  return { ...(ctx.maxDecoded !== undefined ? { maxDecoded: ctx.maxDecoded } : {}), startPastCap: truncated };
}

/** The request body as HAR postData: decoded, text or base64, form params, secrets redacted. */
export function buildPostData(chunks: BodyRecord[], h: string[], ctx: BodyContext, bb: BbEntryExt, notes: string[]): HarPostData {
  const mimeType = headerValue(h, 'content-type') ?? '';
  const { bytes, recorded, wire } = gather(chunks, ctx, notes);
  const truncated = recorded < wire;
  if (truncated) bb.truncated = { ...bb.truncated, request: recorded };
  const decoded = decodeContent(bytes, headerValue(h, 'content-encoding'), truncated, decodeLimits(ctx, truncated));
  if (decoded.cut) notes.push(`request body decodes past the cap: its first ${decoded.bytes.length} decoded bytes kept`);
  if (decoded.undecoded && ctx.redactor && searchedMedia(mimeType)) {
    return { mimeType, text: uninspectable(decoded.bytes, decoded.undecoded, ctx.redactor), comment: `${decoded.undecoded}: not kept, bb cannot search it for secrets` };
  }
  const body = recordedBody(decoded, mimeType, h, ctx.redactor, notes);
  const post: HarPostData = { mimeType, text: body.text };
  if (body.base64) post._encoding = 'base64';
  if (body.form !== undefined) post.params = ctx.redactor ? parseParams(body.form).map((p) => ctx.redactor!.param(p)) : parseParams(body.form);
  const comment = body.base64 && decoded.undecoded ? decoded.undecoded : body.comment;
  if (comment) post.comment = comment;
  return post;
}

/** A body as HAR records it, redacted by its media type (recordedBody). */
interface RecordedBody {
  /** HAR's text: the body as text, or its bytes in base64. */
  text: string;
  /** True when `text` is base64. */
  base64: boolean;
  /** Why the text differs from the decoded bytes (what was redacted), when it does. */
  comment?: string;
  /** A form body's text before its values were redacted: postData.params are parsed from it and redacted one by one. */
  form?: string;
}

/**
 * A decoded body's HAR text with its secrets redacted by its media type: the one path a request's postData and a
 * response's content both take, so a form, multipart or gRPC body is redacted alike whichever side carried it (an
 * OAuth token endpoint answers `access_token=…` as a form).
 */
function recordedBody(decoded: ReturnType<typeof decodeContent>, mimeType: string, h: string[], r: Redactor | undefined, notes: string[]): RecordedBody {
  let bytes = decoded.bytes;
  let comment: string | undefined;
  // Multipart is redacted as bytes: a part holding a file must not keep a password field beside it readable in base64.
  const boundary = r && !decoded.undecoded ? multipartBoundary(mimeType) : undefined;
  if (boundary) {
    const multipart = redactMultipart(bytes, boundary, r!);
    if (multipart) {
      bytes = multipart;
      notes.push('secret multipart fields redacted');
    }
    // Other parts' JWTs, masked at their length (the parts' framing stays).
    bytes = r!.secretBytes(bytes);
  }
  // A gRPC message's JWT hides from the body as carried when compressed or in gRPC-Web-text's base64 (grpc-redact.ts).
  const grpc = r && !decoded.undecoded ? grpcMedia(mimeType) : undefined;
  const grpcRedacted = grpc ? redactGrpcBody(bytes, grpc, headerValue(h, 'grpc-encoding'), r!) : undefined;
  if (grpcRedacted) {
    bytes = grpcRedacted.bytes;
    const n = grpcRedacted.decompressed;
    if (n > 0) comment = `redacted: ${n} compressed gRPC message${n === 1 ? '' : 's'} kept decompressed, JWTs masked; bytes differ from the wire`;
  }
  const out = recordedText({ ...decoded, bytes }, mimeType, r);
  if (out.base64) return comment ? { ...out, comment } : out;
  if (isFormMedia(mimeType)) {
    const red = r ? r.queryString(out.text) : out.text;
    return red === out.text ? { ...out, form: out.text } : { text: red, base64: false, comment: 'secret form values redacted', form: out.text };
  }
  const red = r ? redactText(out.text, mimeType, r) : undefined;
  return red === undefined ? out : { text: red, base64: false, comment: 'redacted: JSON re-serialized, bytes differ from the wire' };
}

/**
 * A decoded body as HAR holds it: text, or base64 of bytes that should have decoded and did not (whatever they look
 * like) or are binary; a binary body's JWTs masked at their length when redacting (a gRPC body, protobuf: its
 * framing stays, so it still decodes). Text is redacted afterwards, by its media type (redactText).
 */
function recordedText(decoded: ReturnType<typeof decodeContent>, mimeType: string, r: Redactor | undefined): { text: string; base64: boolean } {
  if (decoded.undecoded) return { text: decoded.bytes.toString('base64'), base64: true };
  const out = bodyText(decoded.bytes, mimeType);
  const masked = out.base64 && r ? r.secretBytes(decoded.bytes) : decoded.bytes;
  return masked === decoded.bytes ? out : { text: masked.toString('base64'), base64: true };
}

/** True for the media types whose bodies bb searches for secrets (redactText, form fields, multipart parts). */
function searchedMedia(mimeType: string): boolean {
  const media = mediaType(mimeType);
  return isJsonMedia(media) || media === '' || media === 'text/plain' || isFormMedia(mimeType) || multipartBoundary(mimeType) !== undefined
    || isEventStreamMedia(mimeType) || isJsonLinesMedia(mimeType);
}

/**
 * A body of such a type that bb could not decode (a coding it lacks, or bytes
 * the coding does not undo) cannot be searched, so it fails closed, as JSON
 * too deep to inspect does (issue 34): a marked placeholder, keyed by its
 * bytes so that equal bodies still compare equal and different ones differ.
 */
function uninspectable(bytes: Buffer, why: string, r: Redactor): string {
  return `<redacted: ${why.replace(/, body kept as sent$/, '')}; ${bytes.length} bytes not kept, ${r.placeholderOf(bytes.toString('latin1'))}>`;
}

/**
 * A body's text with its secrets redacted by media type; undefined when nothing changed. JSON, plain text, no
 * type and a type bb knows as neither text nor binary (a vendor's JSON under its own name) are read as JSON when
 * they open like JSON; every text has its JWTs redacted (a page that embeds its session's token).
 */
function redactText(text: string, mimeType: string, r: Redactor): string | undefined {
  if (isEventStreamMedia(mimeType)) return r.eventStreamText(text);
  if (isJsonLinesMedia(mimeType)) return r.jsonLinesText(text);
  const media = mediaType(mimeType);
  if (isBinaryMedia(media)) return undefined;
  if (isJsonMedia(media) || media === '' || media === 'text/plain' || !isTextualMedia(media)) return r.textValue(text);
  const replaced = r.embedded(text);
  return replaced === text ? undefined : replaced;
}

/** Fills response.content and bodySize; returns parsed SSE events for event streams. */
export function fillContent(
  response: HarResponse, chunks: BodyRecord[], h: string[], ctx: BodyContext, bb: BbEntryExt, notes: string[], sse: boolean,
): HarEventSourceMessage[] | undefined {
  const mimeType = response.content.mimeType;
  const { bytes, recorded, wire } = gather(chunks, ctx, notes);
  const truncated = recorded < wire;
  if (truncated) bb.truncated = { ...bb.truncated, response: recorded };
  response.bodySize = wire;
  const encoding = headerValue(h, 'content-encoding');
  const decoded = decodeContent(bytes, encoding, truncated, decodeLimits(ctx, truncated));
  if (decoded.cut) notes.push(`response body decodes past the cap: its first ${decoded.bytes.length} decoded bytes kept`);
  const content: HarContent = { size: decoded.bytes.length, mimeType };
  if (!truncated && !decoded.undecoded) content.compression = decoded.bytes.length - wire;
  if (decoded.bytes.length > 0 && decoded.undecoded && ctx.redactor && searchedMedia(mimeType)) {
    content.text = uninspectable(decoded.bytes, decoded.undecoded, ctx.redactor);
    content._bbUndecoded = decoded.undecoded;
    content.comment = `${decoded.undecoded}: not kept, bb cannot search it for secrets`;
  } else if (decoded.bytes.length > 0) {
    const body = recordedBody(decoded, mimeType, h, ctx.redactor, notes);
    content.text = body.text;
    if (body.base64) content.encoding = 'base64';
    if (decoded.undecoded) content._bbUndecoded = decoded.undecoded;
    const comment = body.base64 && decoded.undecoded ? decoded.undecoded : body.comment;
    if (comment) content.comment = comment;
  }
  if (truncated) notes.push(`response body past the cap: ${recorded} of ${wire} bytes recorded`);
  response.content = content;
  if (!sse || !isEventStreamMedia(mimeType)) return undefined;
  const { events, unlisted } = eventSourceMessages(chunks, decoded.decoded ? decoded.bytes : undefined, ctx);
  if (unlisted > 0) {
    bb.unlisted = { ...bb.unlisted, response: unlisted };
    notes.push(`${unlisted} events past the first ${MESSAGES_LISTED} are not listed (the body holds them)`);
  }
  return events;
}

// Events are parsed chunk by chunk with each chunk's time; a content-encoded
// stream is parsed from its decoded whole, every event at the last chunk's time.
// The first MESSAGES_LISTED are listed, later ones counted.
function eventSourceMessages(chunks: BodyRecord[], decodedWhole: Buffer | undefined, ctx: BodyContext): { events: HarEventSourceMessage[]; unlisted: number } {
  const events: HarEventSourceMessage[] = [];
  const lister = new EventLister(ctx, (e) => events.push(e));
  if (decodedWhole) lister.pushDecoded(decodedWhole, chunks.length > 0 ? chunks[chunks.length - 1]!.ts : 0);
  else for (const c of chunks) lister.push(c);
  lister.end();
  return { events, unlisted: lister.unlisted };
}

/**
 * An event stream's events as its entry lists them (redacted, the first MESSAGES_LISTED; later ones counted), fed
 * its response body's records in order: the entry's own parse, and a live follower's that reads each chunk once
 * (live.ts followEvents: a page following a long stream, without building the entry again for each new event).
 */
export class EventLister {
  unlisted = 0;
  private listed = 0;
  private lastTs = 0;
  private readonly parser: EventStreamParser;

  constructor(
    private readonly ctx: BodyContext,
    each: (event: HarEventSourceMessage) => void,
  ) {
    const r = ctx.redactor;
    this.parser = new EventStreamParser((e) => {
      if (this.listed >= MESSAGES_LISTED) {
        this.unlisted++;
        return;
      }
      this.listed++;
      if (r) e.data = r.textValue(e.data) ?? e.data;
      each(e);
    });
  }

  /** The body's next record (its kept bytes, read from `.bodies`, at its time). */
  push(c: BodyRecord): void {
    this.lastTs = c.ts;
    if (c.n > 0) this.parser.push(this.ctx.readBody(c), c.ts);
  }

  /** A content-encoded body's decoded whole, every event at `ts` (its last chunk's time). */
  pushDecoded(bytes: Buffer, ts: number): void {
    this.lastTs = ts;
    this.parser.push(bytes, ts);
  }

  /** The body ended (or the entry is built as it stands). */
  end(): void {
    this.parser.end(this.lastTs);
  }
}
