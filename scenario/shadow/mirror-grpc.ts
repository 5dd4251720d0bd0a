// A mirrored gRPC call's request body (docs/shadow.md "Sessions: each
// target's own ids and cookies"): length-prefixed messages (PROTOCOL-HTTP2.md
// "Length-Prefixed-Message": a flags byte, bit 0 compressed, a 4-byte
// big-endian length, the message), gRPC-Web's binary framing alike. Each
// message has its values bound as a JSON body's are (string fields' tokens,
// integer ids: diff/bind rewriteProtoMessage) and is framed again with its
// new length (replay's frameMessage), a compressed one decompressed first
// and compressed again with the call's grpc-encoding as the capture and the
// replay do. A message that does not decompress, a cut last one and
// gRPC-Web-text (base64) go as sent.
import { inflateGrpcMessage } from '../../capture/index.js';
import { protoTokens, rewriteProtoMessage } from '../../diff/index.js';
import { frameMessage } from '../replay/index.js';

/** One whole frame of a body: its flags, its message as sent and as read (decompressed), where it was. */
interface Frame {
  flags: number;
  start: number;
  end: number;
  /** The message, decompressed when its flag says so; undefined when it does not decompress (it goes as sent). */
  message: Buffer | undefined;
}

// The whole frames of a body; a frame cut short at the end is not one.
function framesOf(body: Buffer, encoding: string | undefined): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (body.length - at >= 5) {
    const end = at + 5 + body.readUInt32BE(at + 1);
    if (end > body.length) break;
    const flags = body[at]!;
    const raw = body.subarray(at + 5, end);
    const read = flags & 1 ? inflateGrpcMessage(raw, encoding) : raw;
    frames.push({ flags, start: at, end, message: typeof read === 'string' ? undefined : read });
    at = end;
  }
  return frames;
}

/** The body with each target's own values in its messages; `body` itself when none changed. `encoding`: the call's grpc-encoding. */
export function rewriteGrpcBody(body: Buffer, map: { readonly size: number; get(token: string): string | undefined }, encoding: string | undefined): Buffer {
  if (map.size === 0) return body;
  let changed = false;
  const parts: Buffer[] = [];
  let at = 0;
  for (const f of framesOf(body, encoding)) {
    const r = f.message && rewriteProtoMessage(f.message, map);
    parts.push(r?.uses.length ? frameMessage(Buffer.from(r.bytes), (f.flags & 1) === 1, encoding) : body.subarray(f.start, f.end));
    changed ||= r?.uses.length !== undefined && r.uses.length > 0;
    at = f.end;
  }
  return changed ? Buffer.concat([...parts, body.subarray(at)]) : body;
}

/** The values a gRPC request body's messages carry (as the binding reads a client's message). */
export function grpcBodyTokens(body: Buffer, encoding: string | undefined): string[] {
  const out: string[] = [];
  for (const f of framesOf(body, encoding)) if (f.message) for (const t of protoTokens(f.message)) out.push(t);
  return out;
}
