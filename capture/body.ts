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
}

/** Undoes Content-Encoding (gzip, x-gzip, deflate, br, several in sequence); zstd and unknown codings stay raw. */
export function decodeContent(raw: Buffer, contentEncoding: string | undefined, truncated: boolean): DecodedBody {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || raw.length === 0) return { bytes: raw, decoded: false };
  let bytes = raw;
  // Codings are listed in the order applied: undo them last first (RFC 9110 §8.4).
  for (const coding of [...codings].reverse()) {
    try {
      bytes = decodeCoding(bytes, coding, { truncated });
    } catch (err) {
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
      } catch {
        return inflateRawSync(bytes, flush);
      }
    case 'br':
      return brotliDecompressSync(bytes, opts.truncated ? { ...cap, finishFlush: zlib.BROTLI_OPERATION_FLUSH } : cap);
    default:
      throw new Error(`unknown coding ${coding}`);
  }
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
