// Messages a capture does not list (capture/options.ts MESSAGES_LISTED;
// docs/diff.md "What is compared"). A gRPC call's or an event stream's
// messages past the first 100,000 of a direction are in the body's bytes
// only, counted in `_bb.unlisted`. They compare as how many there are and a
// digest of their normalized forms in order: each read from the body one at a
// time, normalized by the same walk as a listed one (so rules, timestamps and
// issued ids apply), folded into a SHA-256 and let go. Memory stays that of
// one message; a difference says that one of them differs, not which.
import { createHash, type Hash } from 'node:crypto';
import { canonical, EventStreamParser, type EventStreamMessage } from '../../core/index.js';
import { grpcMessagesPast, type GrpcMedia } from '../../capture/index.js';
import type { Unlisted } from '../types.js';

/** Folds normalized messages (or an array's items past those compared: walk.ts), in order, into a count and a digest. */
export class UnlistedFold {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;

  add(normalized: unknown): void {
    this.count++;
    this.hash.update(canonical(normalized));
    this.hash.update('\n');
  }

  done(): Unlisted | undefined {
    return this.count > 0 ? { count: this.count, digest: this.hash.digest('hex').slice(0, 32) } : undefined;
  }
}

/** The events of an event stream's text past its first `listed`, each normalized by `normalize`; undefined when none are. */
export function unlistedEvents(text: string, listed: number, normalize: (event: EventStreamMessage) => unknown): Unlisted | undefined {
  const fold = new UnlistedFold();
  let k = 0;
  EventStreamParser.eachInText(text, (event) => {
    if (k++ >= listed) fold.add(normalize(event));
  });
  return fold.done();
}

/**
 * The whole messages of a gRPC body past its first `listed` (capture's grpcMessagesPast), each normalized by
 * `normalize` (its flags and payload). Undefined when none are.
 */
export function unlistedGrpc(body: Buffer, media: GrpcMedia, listed: number, normalize: (flags: number, payload: Buffer) => unknown): Unlisted | undefined {
  const fold = new UnlistedFold();
  for (const m of grpcMessagesPast(body, media, listed)) fold.add(normalize(m.flags, m.payload));
  return fold.done();
}
