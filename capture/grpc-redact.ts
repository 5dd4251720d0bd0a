// A gRPC body's JWTs masked inside its messages, for the body HAR records
// (postData, content). Masking the body as carried finds a JWT only in a
// message sent as is: a compressed message (grpc-encoding gzip) or
// gRPC-Web-text's base64 hides it, and `_grpcMessages` showing it redacted
// while the body keeps it would be a leak one gunzip away. So the body is read
// frame by frame as its messages are listed (grpc.ts splitGrpcBody): each
// message decompressed and masked. A compressed message that held a JWT is
// kept decompressed, its compressed flag cleared (PROTOCOL-HTTP2.md: the flag
// says per message whether it is compressed, so the body still reads and
// replays), as a redacted gzip HTTP body is kept decoded: bytes differ from
// the wire, and the entry says so. gRPC-Web-text is base64-encoded again.
import { grpcFrameAt, grpcFramedBytes, inflateGrpcMessage, type GrpcMedia } from './grpc.js';
import type { Redactor } from './redact.js';

/**
 * A gRPC body (as recorded, gRPC-Web-text's base64 included) with the JWTs of its messages masked (secretBytes), and
 * how many compressed messages it keeps decompressed for it; undefined when none held one. A message that does not decompress, or is cut short, stays as sent (its bytes are
 * masked as they are, as a binary body's).
 */
export function redactGrpcBody(body: Buffer, media: GrpcMedia, encoding: string | undefined, r: Pick<Redactor, 'secretBytes'>): { bytes: Buffer; decompressed: number } | undefined {
  const bytes = grpcFramedBytes(body, media);
  const out: Buffer[] = [];
  let changed = false;
  let decompressed = 0;
  let at = 0;
  for (let f = grpcFrameAt(bytes, 0); f; f = grpcFrameAt(bytes, at)) {
    const frame = bytes.subarray(at, Math.min(f.next, bytes.length));
    at = f.next;
    const whole = f.next <= bytes.length;
    const inflated = whole && f.flags & 1 ? inflateGrpcMessage(f.payload, encoding) : undefined;
    if (inflated instanceof Buffer) {
      const masked = r.secretBytes(inflated);
      if (masked === inflated) out.push(frame);
      else {
        const prefix = Buffer.alloc(5);
        prefix[0] = f.flags & ~1;
        prefix.writeUInt32BE(masked.length, 1);
        out.push(prefix, masked);
        changed = true;
        decompressed++;
      }
      continue;
    }
    // Sent as is (a gRPC-Web trailer frame too), or bytes that do not decompress: masked where they stand.
    const masked = r.secretBytes(frame);
    if (masked !== frame) changed = true;
    out.push(masked);
  }
  if (!changed) return undefined;
  // Fewer than a prefix's 5 bytes left (cut short): kept.
  if (at < bytes.length) out.push(bytes.subarray(at));
  const redacted = Buffer.concat(out);
  return { bytes: media.text ? Buffer.from(redacted.toString('base64'), 'latin1') : redacted, decompressed };
}
