// A WebSocket conversation's messages past those an entry lists
// (MESSAGES_LISTED a direction, capture/options.ts; docs/capture-format.md
// "What a capture holds"). 3M one-byte messages were a 355 MB entry, 855 MB to
// write and 4.2 GB to diff, and a million more an entry no reader opens. Past
// the list a direction's messages leave the entry: what stays is how many and
// one hash of them in order, each message's opcode and payload (its kept bytes
// and, past the budget or the body cap, the hash the recorder took of the
// rest), keyed as rest hashes are (rest-hash.ts) so a short message cannot be
// found by trying values. Unlike a gRPC call's or an event stream's, these
// messages are in no body: no rule can reach them, and two conversations
// compare past the list exactly, as messages past the budget do.
//
// Memory: given a reader of `.bodies` (the HAR's writer and a follower of a
// capture have one: entry-assembly.ts) a message past the list is folded as it
// comes and costs nothing; without one it costs its slice (three numbers) until
// the entry is written. One kept as a hash alone (past the budget: every later
// one of its direction is) is folded at once either way. Pings and pongs past
// the list (timer-driven, and dropped by bb diff's ws-ping-pong rule) are
// neither counted nor hashed.
import { createHash, type Hash } from 'node:crypto';
import type { BodySlice, WsMessageRecord } from './journal.js';
import { MESSAGES_LISTED } from './options.js';
import type { RestHashing } from './rest-hash.js';

/** One direction's messages past the list, until the entry is written. */
class PastDirection {
  count = 0;
  /** The messages with kept bytes, in order: where their bytes are, their opcode, the hash of a rest past the cap. */
  private readonly at: number[] = [];
  private readonly kept: number[] = [];
  private readonly ops: number[] = [];
  private readonly rests = new Map<number, string>();
  /** Messages kept as a hash alone (past the budget), folded as they come; a run ended by a message with bytes (a close frame) is placed before it. */
  private tail: Hash | undefined;
  private readonly tails = new Map<number, Buffer>();
  /** The digest so far of the messages folded as they came (add with a reader), before the deferred ones. */
  private folded: Hash | undefined;

  /** Adds the next message: folded now when `read` is given, else its slice kept for digest. */
  add(r: WsMessageRecord, read?: (slice: BodySlice) => Buffer): void {
    this.count++;
    if (r.n === 0 && r.h !== undefined) {
      (this.tail ??= createHash('sha256')).update(`${r.op}:${r.h}\n`);
      return;
    }
    if (read && this.at.length === 0) {
      const all = (this.folded ??= createHash('sha256'));
      if (this.tail) {
        all.update(this.tail.digest());
        this.tail = undefined;
      }
      all.update(messageLine(r.op, r.n > 0 && r.o !== undefined && r.o >= 0 ? read({ o: r.o, n: r.n, w: r.n }) : NO_BYTES, r.h));
      return;
    }
    if (this.tail) {
      this.tails.set(this.at.length, this.tail.digest());
      this.tail = undefined;
    }
    if (r.h !== undefined) this.rests.set(this.at.length, r.h);
    this.at.push(r.o ?? -1);
    this.kept.push(r.n);
    this.ops.push(r.op);
  }

  /** The digest of the messages in order; `read` gives a slice's bytes. Taken from copies: it may be asked again (a follower builds an entry's head, then the whole). */
  digest(read: (slice: BodySlice) => Buffer): Buffer {
    const all = this.folded ? this.folded.copy() : createHash('sha256');
    for (let i = 0; i < this.at.length; i++) {
      const run = this.tails.get(i);
      if (run) all.update(run);
      all.update(messageLine(this.ops[i]!, this.kept[i]! > 0 && this.at[i]! >= 0 ? read({ o: this.at[i]!, n: this.kept[i]!, w: this.kept[i]! }) : NO_BYTES, this.rests.get(i)));
    }
    if (this.tail) all.update(this.tail.copy().digest());
    return all.digest();
  }
}

const NO_BYTES = Buffer.alloc(0);

// What a message with bytes adds to its direction's digest: its opcode, the hash of its kept bytes, the hash of a rest.
function messageLine(op: number, bytes: Buffer, rest: string | undefined): string {
  return `${op}:${createHash('sha256').update(bytes).digest('hex')}:${rest ?? ''}\n`;
}

/** Both directions of a conversation: which messages it lists, and the rest folded. */
export class WsUnlisted {
  private listed = { send: 0, receive: 0 };
  private readonly past: { send?: PastDirection; receive?: PastDirection } = {};

  /** Whether the entry lists this message (true for the first MESSAGES_LISTED of its direction); false when it was folded. */
  take(r: WsMessageRecord): boolean {
    if (this.listed[r.d] < MESSAGES_LISTED) {
      this.listed[r.d]++;
      return true;
    }
    if (r.op !== 9 && r.op !== 10) (this.past[r.d] ??= new PastDirection()).add(r);
    return false;
  }

  /** Messages a reader of `.bodies` met so far per direction (foldPast), whether it holds them or reads them back later. */
  private met = { send: 0, receive: 0 };

  /**
   * For a reader of `.bodies` meeting a conversation's messages as they come (the HAR's writer, a follower, the
   * live view): whether this one is past its direction's list (the first MESSAGES_LISTED), and then it is folded
   * now, with its bytes, and costs nothing until the entry is written. The reader neither holds nor places it.
   */
  foldPast(r: WsMessageRecord, read: (slice: BodySlice) => Buffer): boolean {
    if (++this.met[r.d] <= MESSAGES_LISTED) return false;
    if (r.op !== 9 && r.op !== 10) (this.past[r.d] ??= new PastDirection()).add(r, read);
    return true;
  }

  /** Whether any message went past the list. */
  any(): boolean {
    return (this.past.send?.count ?? 0) + (this.past.receive?.count ?? 0) > 0;
  }

  /** What the entry says of them: counts (`request` sent by the client, `response` by the server) and their hashes. */
  summary(read: (slice: BodySlice) => Buffer, hashing: RestHashing): { counts: { request?: number; response?: number }; hashes: { request?: string; response?: string } } {
    const counts: { request?: number; response?: number } = {};
    const hashes: { request?: string; response?: string } = {};
    for (const [d, side] of [['send', 'request'], ['receive', 'response']] as const) {
      const past = this.past[d];
      if (!past || past.count === 0) continue;
      counts[side] = past.count;
      hashes[side] = hashing.value(past.digest(read));
    }
    return { counts, hashes };
  }
}
