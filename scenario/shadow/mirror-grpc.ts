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
import { GrpcFrames, inflateGrpcMessage } from '../../capture/index.js';
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

/** A client message longer than this (bytes) goes on as it crosses, not held whole for binding. */
const MAX_HELD_MESSAGE = 4 * 1024 * 1024;
/** Bytes of client messages held waiting for the target (their read-after-write waits) at most; past it they go on at once. */
export const MAX_WAITING_BYTES = 16 * 1024 * 1024;

/** What a streaming call's client messages need of their target: its values, and where a message must wait for it. */
export interface CallTarget {
  bindings: { readonly size: number; get(token: string): string | undefined };
  /** Runs `go` once the target has said what a message carrying `tokens` needs (or at once). */
  whenReady(tokens: () => ReadonlySet<string>, go: () => void): void;
}

/**
 * The client side of a mirrored streaming call (client-streaming or bidi) whose body is still arriving: its
 * messages are cut out of the chunks as they cross, each waits (as a mirrored request does) until the target
 * has said what the message sends back, and goes on with the target's own values, in order. A message past
 * MAX_HELD_MESSAGE goes on as it crosses; with more than MAX_WAITING_BYTES waiting, messages stop waiting.
 */
export class ClientMessages {
  /** The body cut into messages as it crosses: whole ones wait for the target, an oversized one's pieces pass. */
  private readonly frames = new GrpcFrames(MAX_HELD_MESSAGE, { frame: (f) => this.enqueue(f, true), passing: (piece) => this.enqueue(piece, false) });
  private readonly queue: Array<{ bytes: Buffer; whole: boolean }> = [];
  private waitingBytes = 0;
  private busy = false;
  private ended = false;

  constructor(
    private readonly target: CallTarget,
    private readonly out: { write(chunk: Buffer): void; end(): void },
    private readonly encoding: string | undefined,
  ) {}

  /** Bytes of messages waiting for the target (what the mirror holds of the call, with its stream's buffers). */
  get waiting(): number {
    return this.waitingBytes;
  }

  /** More of the body, as it crossed. */
  write(chunk: Buffer): void {
    this.frames.write(chunk);
    this.pump();
  }

  /** The client ended its messages. */
  end(): void {
    const rest = this.frames.rest();
    if (rest.length > 0) this.enqueue(rest, false);
    this.ended = true;
    this.pump();
  }

  private enqueue(bytes: Buffer, whole: boolean): void {
    this.queue.push({ bytes, whole });
    this.waitingBytes += bytes.length;
  }

  // Writes what may go, in order; a message that waits for the target resumes the pump when it goes.
  private pump(): void {
    while (!this.busy) {
      const next = this.queue.shift();
      if (!next) {
        if (this.ended) this.out.end();
        return;
      }
      this.busy = true;
      let went = false;
      let returned = false;
      const go = () => {
        this.waitingBytes -= next.bytes.length;
        this.out.write(next.whole ? rewriteGrpcBody(next.bytes, this.target.bindings, this.encoding) : next.bytes);
        this.busy = false;
        went = true;
        // It waited: the pump goes on from here.
        if (returned) this.pump();
      };
      if (!next.whole || this.waitingBytes > MAX_WAITING_BYTES) go();
      else this.target.whenReady(() => new Set(grpcBodyTokens(next.bytes, this.encoding)), go);
      returned = true;
      if (!went) return;
    }
  }
}
