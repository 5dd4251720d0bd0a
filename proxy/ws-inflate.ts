// permessage-deflate for one direction of a tapped WebSocket (RFC 7692
// section 7.2.2), inflated as a stream: each piece of a compressed message
// goes to zlib as it arrives, and of what comes out only the first `keep`
// bytes are kept; the rest is counted. A message of any inflated size (a
// 64 KiB bomb inflates to 64 MiB) costs at most `keep` bytes here, and the
// frames behind it are parsed as usual.
//
// One zlib stream serves every message while the sender keeps its context
// (the window carries over, section 7.2.3.3); messages are written to it in
// wire order and end with a sync flush, and zlib answers writes in order, so
// the output that arrives before a message's flush callback is that
// message's (ws's PerMessageDeflate relies on the same). A sender that resets
// its context (`*_no_context_takeover`) gets a stream per message: its
// messages may end the DEFLATE stream (BFINAL, section 7.2.3.4), after which
// a stream takes no more input.
import zlib from 'node:zlib';
import { createHash, type Hash } from 'node:crypto';

/** What one direction negotiated, and how much of a message to keep. */
export interface InflaterOptions {
  /** The sender's LZ77 window (its `*_max_window_bits`, default 15). */
  windowBits: number;
  /** The sender keeps its context between messages (no `*_no_context_takeover`). */
  takeover: boolean;
  /** Inflated bytes of a message to keep (Infinity = all); the rest is counted. */
  keep: number;
}

/** One message's inflated result. */
export interface Inflated {
  /** Its first `keep` inflated bytes. */
  data: Buffer;
  /** All its inflated bytes. */
  size: number;
  /** When `size` passes `keep`: the SHA-256 digest of its inflated bytes past the first `keep`. */
  restSha256?: Buffer;
}

/** What a message's end is told: its result, or why it could not be inflated. */
export type InflateDone = (result: Inflated | Error) => void;

// Section 7.2.2: the sender removed these four bytes of the final sync flush.
const TRAILER = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** A message being inflated: what came out so far, and who hears the end. */
interface Slot {
  chunks: Buffer[];
  kept: number;
  size: number;
  /** The running hash of its inflated bytes past `keep`, made at the first such byte. */
  rest?: Hash;
  done?: InflateDone;
  settled: boolean;
}

/** A zlib stream and its messages not yet settled, oldest first (output goes to the first). */
interface Lane {
  z: zlib.InflateRaw;
  slots: Slot[];
  /** zlib ended the stream (BFINAL): it takes no next message. */
  ended: boolean;
}

/** Inflates one direction's compressed messages as their pieces arrive. */
export class MessageInflater {
  private readonly opts: InflaterOptions;
  // The stream the next piece goes to (while the sender keeps its context, the one stream).
  private lane: Lane | undefined;
  // The message whose pieces are arriving.
  private current: Slot | undefined;
  private readonly lanes = new Set<Lane>();
  // zlib refused the data: every later message fails with this (the direction is not parsed further).
  private failed: Error | undefined;

  constructor(opts: InflaterOptions) {
    this.opts = opts;
  }

  /** A piece of the compressed message in progress, unmasked, in wire order. */
  write(piece: Buffer): void {
    if (!this.failed) this.start().z.write(piece);
  }

  /** The message's last piece came: `done` hears its result once zlib has inflated it all. */
  end(done: InflateDone): void {
    if (this.failed) {
      this.current = undefined;
      done(this.failed);
      return;
    }
    const lane = this.start();
    const slot = this.current!;
    this.current = undefined;
    slot.done = done;
    lane.z.write(TRAILER);
    lane.z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
      if (lane.slots[0] === slot) lane.slots.shift();
      const inflated: Inflated = { data: slot.chunks.length === 1 ? slot.chunks[0]! : Buffer.concat(slot.chunks, slot.kept), size: slot.size };
      if (slot.rest) inflated.restSha256 = slot.rest.digest();
      settle(slot, inflated);
      if (!this.opts.takeover || lane.ended) this.retire(lane);
    });
    if (!this.opts.takeover) this.lane = undefined;
  }

  /** Frees zlib; messages not settled yet never are. Idempotent. */
  close(): void {
    for (const lane of this.lanes) {
      lane.slots = [];
      lane.z.close();
    }
    this.lanes.clear();
    this.lane = undefined;
    this.current = undefined;
  }

  // The lane and slot of the message in progress, made at its first piece.
  private start(): Lane {
    let lane = this.lane;
    if (!lane || lane.ended) lane = this.lane = this.newLane();
    if (!this.current) {
      this.current = { chunks: [], kept: 0, size: 0, settled: false };
      lane.slots.push(this.current);
    }
    return lane;
  }

  private newLane(): Lane {
    const z = zlib.createInflateRaw({ windowBits: this.opts.windowBits });
    const lane: Lane = { z, slots: [], ended: false };
    const keep = this.opts.keep;
    z.on('data', (chunk: Buffer) => {
      const slot = lane.slots[0];
      if (!slot) return;
      slot.size += chunk.length;
      const room = keep - slot.kept;
      // Past `keep`: hashed as it comes out, not held.
      if (room <= 0) {
        (slot.rest ??= createHash('sha256')).update(chunk);
        return;
      }
      if (chunk.length > room) (slot.rest ??= createHash('sha256')).update(chunk.subarray(room));
      // zlib hands out views of its output buffer, which it does not write again once handed out.
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      slot.chunks.push(kept);
      slot.kept += kept.length;
    });
    z.on('end', () => (lane.ended = true));
    z.on('error', (err: Error) => {
      // zlib stops at the first bad byte: this message and every later one fail.
      this.failed = err;
      for (const slot of lane.slots.splice(0)) settle(slot, err);
      this.retire(lane);
    });
    this.lanes.add(lane);
    return lane;
  }

  private retire(lane: Lane): void {
    if (this.lane === lane) this.lane = undefined;
    if (this.lanes.delete(lane)) lane.z.close();
  }
}

function settle(slot: Slot, result: Inflated | Error): void {
  if (slot.settled) return;
  slot.settled = true;
  slot.done?.(result);
}
