// A mirrored gRPC call's request body (docs/shadow.md "Sessions: each
// target's own ids and cookies"): length-prefixed messages (PROTOCOL-HTTP2.md
// "Length-Prefixed-Message": a flags byte, bit 0 compressed, a 4-byte
// big-endian length, the message), gRPC-Web's binary framing alike. Each
// uncompressed message has its values bound as a JSON body's are (string
// fields' tokens, integer ids: diff/bind rewriteProtoMessage) and is framed
// again with its new length. A compressed message, a cut last one and
// gRPC-Web-text (base64) go as sent.
import { protoTokens, rewriteProtoMessage } from '../../diff/index.js';

/** One whole frame of a body: its flags and its message. */
interface Frame {
  flags: number;
  message: Buffer;
}

// The whole frames of a body and what follows the last (a frame cut short).
function framesOf(body: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let at = 0;
  while (body.length - at >= 5) {
    const end = at + 5 + body.readUInt32BE(at + 1);
    if (end > body.length) break;
    frames.push({ flags: body[at]!, message: body.subarray(at + 5, end) });
    at = end;
  }
  return { frames, rest: body.subarray(at) };
}

/** The body with each target's own values in its uncompressed messages; `body` itself when none changed. */
export function rewriteGrpcBody(body: Buffer, map: { readonly size: number; get(token: string): string | undefined }): Buffer {
  if (map.size === 0) return body;
  const { frames, rest } = framesOf(body);
  let changed = false;
  const parts: Buffer[] = [];
  for (const f of frames) {
    const r = f.flags & 1 ? undefined : rewriteProtoMessage(f.message, map);
    const next = r?.uses.length ? Buffer.from(r.bytes) : f.message;
    if (next !== f.message) changed = true;
    const prefix = Buffer.alloc(5);
    prefix[0] = f.flags;
    prefix.writeUInt32BE(next.length, 1);
    parts.push(prefix, next);
  }
  return changed ? Buffer.concat([...parts, rest]) : body;
}

/** The values a gRPC request body's uncompressed messages carry (as the binding reads a client's message). */
export function grpcBodyTokens(body: Buffer): string[] {
  const out: string[] = [];
  for (const f of framesOf(body).frames) if (!(f.flags & 1)) for (const t of protoTokens(f.message)) out.push(t);
  return out;
}
