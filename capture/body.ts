// Body bytes → what HAR shows: content-encoding decoded, then text when the
// bytes are UTF-8 text, else base64 of the exact bytes. Pure functions.
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync, constants as zlib } from 'node:zlib';
import { isBinaryMedia } from '../core/index.js';

/** The outcome of undoing Content-Encoding. */
export interface DecodedBody {
  /** The decoded bytes (the raw bytes when nothing could be decoded). */
  bytes: Buffer;
  /** True when `bytes` differ from the wire bytes (some coding was undone). */
  decoded: boolean;
  /** Why the bytes stay as on the wire although a coding was declared. */
  undecoded?: string;
  /** The decoded bytes are the start of a body that decodes to more than the cap (DecodeLimits.startPastCap). */
  cut?: boolean;
  /** The body decodes, to more than the cap: kept as sent (`undecoded` says so), or its start (`cut`). */
  pastCap?: boolean;
}

/**
 * The most bytes a body decodes to before bb keeps it as sent instead: a few hundred KB of gzip on the wire can
 * decode to gigabytes (a compression bomb, or a huge repetitive log), and the decoded bytes are held whole, as a
 * HAR's text holds them. 64 MiB, as a zip's inflated size in bb diff (docs/capture-format.md "Past the body cap").
 */
export const DECODED_BODY_CAP = 64 * 1048576;

/** How far decodeContent goes. */
export interface DecodeLimits {
  /** The most decoded bytes (DECODED_BODY_CAP when absent); zlib stops there, no more is ever held. */
  maxDecoded?: number;
  /**
   * Past the cap, the decoded start of the body (at most `maxDecoded` bytes, `cut`) instead of the bytes as sent:
   * for a reader of a start anyway (a body cut at the body cap, what binding reads of an answer). One coding only.
   */
  startPastCap?: boolean;
}

/**
 * Undoes Content-Encoding (gzip, x-gzip, deflate, br, several in sequence); zstd and unknown codings stay raw, and so
 * does a body that decodes to more than the cap (unless its start is asked for: `limits.startPastCap`).
 */
export function decodeContent(raw: Buffer, contentEncoding: string | undefined, truncated: boolean, limits: DecodeLimits = {}): DecodedBody {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || raw.length === 0) return { bytes: raw, decoded: false };
  const max = limits.maxDecoded ?? DECODED_BODY_CAP;
  let bytes = raw;
  // Codings are listed in the order applied: undo them last first (RFC 9110 §8.4).
  for (const coding of [...codings].reverse()) {
    try {
      bytes = decodeCoding(bytes, coding, { truncated, maxOutputLength: max });
    } catch (err) {
      if (isTooLarge(err)) {
        if (limits.startPastCap && codings.length === 1) return { bytes: decodedStart(raw, coding, max), decoded: true, cut: true, pastCap: true };
        return { bytes: raw, decoded: false, undecoded: `${coding}: decodes to more than ${max} bytes, body kept as sent`, pastCap: true };
      }
      const why =
        coding === 'zstd'
          ? 'zstd: no decoder in Node 20, body kept as sent'
          : (err as Error).message.startsWith('unknown coding')
            ? `${coding}: unknown content-coding, body kept as sent`
            : `${coding}: does not decode (${(err as Error).message}), body kept as sent`;
      return { bytes: raw, decoded: false, undecoded: why };
    }
  }
  return { bytes, decoded: true };
}

/**
 * The start of a body that decodes past `max`: the decoding of the longest of its halved starts (half, a quarter,
 * …) that stays within `max`. Each try stops at `max` output, so a bomb costs at most one cap per halving.
 */
function decodedStart(bytes: Buffer, coding: string, max: number): Buffer {
  for (let n = bytes.length >> 1; n > 0; n >>= 1) {
    try {
      return decodeCoding(bytes.subarray(0, n), coding, { truncated: true, maxOutputLength: max });
    } catch (err) {
      if (!isTooLarge(err)) break;
    }
  }
  return Buffer.alloc(0);
}

/**
 * One content coding undone (gzip, deflate zlib-wrapped or raw, br).
 * `truncated`: the bytes are a prefix (cut at the cap): flush what decodes
 * instead of failing. `maxOutputLength` bounds the output (zlib throws past it).
 * Throws for an unknown coding or bytes that do not decode.
 */
export function decodeCoding(bytes: Buffer, coding: string, opts: { truncated?: boolean; maxOutputLength?: number } = {}): Buffer {
  const cap = opts.maxOutputLength !== undefined ? { maxOutputLength: opts.maxOutputLength } : {};
  const flush = opts.truncated ? { ...cap, finishFlush: zlib.Z_SYNC_FLUSH } : cap;
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(bytes, flush);
    case 'deflate':
      // "deflate" is meant to be zlib-wrapped, but servers send raw deflate too.
      try {
        return inflateSync(bytes, flush);
      } catch (err) {
        if (isTooLarge(err)) throw err;
        return inflateRawSync(bytes, flush);
      }
    case 'br':
      return brotliDecompressSync(bytes, opts.truncated ? { ...cap, finishFlush: zlib.BROTLI_OPERATION_FLUSH } : cap);
    default:
      throw new Error(`unknown coding ${coding}`);
  }
}

/** zlib's error for output past `maxOutputLength`. */
function isTooLarge(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ERR_BUFFER_TOO_LARGE';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text (UTF-8, no control bytes, not a binary media type) or base64 of the exact bytes. */
export function bodyText(bytes: Buffer, mimeType: string): { text: string; base64: boolean } {
  if (bytes.length === 0) return { text: '', base64: false };
  if (!isBinaryMedia(mimeType)) {
    const text = utf8Text(bytes);
    if (text !== undefined) return { text, base64: false };
  }
  return { text: bytes.toString('base64'), base64: true };
}

/** The bytes as a string when they are strict UTF-8 without control bytes (tab, CR, LF, FF allowed). */
export function utf8Text(bytes: Buffer): string | undefined {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) || b === 0x7f) return undefined;
  }
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
