// A replayed gRPC call's messages (docs/replay.md "HTTP/2 and gRPC"): the
// client's messages of the capture's `_grpcMessages`, framed again as they
// crossed (capture/grpc.ts splits them: 1 byte flags, bit 0 compressed, 4
// bytes big-endian length, the message; PROTOCOL-HTTP2.md
// "Length-Prefixed-Message"), each to go once the target has sent as many
// messages as the original server had before it, which replays unary,
// server, client and bidi streaming calls alike. And the call's deadline:
// `grpc-timeout` (PROTOCOL-HTTP2.md "Timeout") read and written again.
import { pairValue } from '../../core/index.js';
import { grpcMedia, grpcMessagesPast, type HarEntry } from '../../capture/index.js';
import { encodeCoding } from './request.js';

/** One client message of a call, ready to go. */
export interface GrpcSend {
  /** The length-prefixed message as it goes on the stream, built when it goes (its values are the target's as known then). */
  frame(): Buffer;
  /** Server messages the original had received before this one went: the target must have sent as many first. */
  after: number;
}

/**
 * A gRPC call's client messages, in order; undefined when the entry is not a gRPC call with recorded messages (its body
 * then goes as recorded). `rewrite` puts the target's values in the k-th message as the capture holds it
 * (decompressed) when it goes, before it is framed (correlate.ts): a bidi call's message sends back what the target's
 * previous messages issued.
 */
export function grpcSends(entry: HarEntry, rewrite: (message: Buffer, k: number) => Buffer = (m) => m): GrpcSend[] | undefined {
  const media = grpcMedia(pairValue(entry.request.headers, 'content-type'));
  // gRPC-Web goes over HTTP/1.1 as a plain body; its frames are the recorded body.
  if (!media || media.web || !entry._grpcMessages) return undefined;
  const encoding = pairValue(entry.request.headers, 'grpc-encoding');
  const out: GrpcSend[] = [];
  let received = 0;
  for (const m of entry._grpcMessages) {
    if (m.type === 'receive') received++;
    else {
      // A message cut short or kept compressed goes as recorded: its values cannot be read.
      const whole = m._bb?.truncated === undefined && m._bb?.undecoded === undefined;
      const data = Buffer.from(m.data, 'base64');
      const k = out.length;
      out.push({ frame: () => frameMessage(whole ? rewrite(data, k) : data, m.compressed, encoding, m._bb?.undecoded !== undefined), after: received });
    }
  }
  // Messages past those the capture lists (_bb.unlisted) go as the recorded body holds them, after the listed ones.
  const listed = out.length;
  const text = entry.request.postData?.text;
  if ((entry._bb?.unlisted?.request ?? 0) > 0 && text !== undefined) {
    const body = Buffer.from(text, entry.request.postData?._encoding === 'base64' ? 'base64' : 'latin1');
    for (const { frame } of grpcMessagesPast(body, media, listed)) out.push({ frame: () => frame, after: received });
  }
  return out;
}

/**
 * One length-prefixed message. A compressed message is held decompressed in
 * the capture and compressed again with the call's grpc-encoding; one kept
 * compressed (`undecoded`: an encoding bb could not undo) goes as it is.
 */
export function frameMessage(data: Buffer, compressed: boolean, encoding: string | undefined, keptCompressed = false): Buffer {
  const payload = compressed && !keptCompressed ? (encodeCoding(data, encoding ?? 'identity') ?? data) : data;
  const prefix = Buffer.alloc(5);
  prefix[0] = compressed ? 1 : 0;
  prefix.writeUInt32BE(payload.length, 1);
  return Buffer.concat([prefix, payload]);
}

/** ms per grpc-timeout unit. */
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/** A grpc-timeout value ("5000m", "2S": up to 8 digits and a unit) in ms; undefined when it is not one. */
export function grpcTimeoutMs(value: string | undefined): number | undefined {
  const m = /^\s*(\d{1,8})([HMSmun])\s*$/.exec(value ?? '');
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : undefined;
}

/**
 * The grpc-timeout to send when `elapsedMs` of the call's budget `budgetMs`
 * have gone by before its headers go: the time left to the original deadline
 * (counted from the call's start), in whole ms; the recorded text when none went.
 */
export function grpcTimeoutLeft(recorded: string, budgetMs: number, elapsedMs: number): string {
  if (elapsedMs < 1) return recorded;
  return `${Math.max(0, Math.floor(budgetMs - elapsedMs))}m`;
}
