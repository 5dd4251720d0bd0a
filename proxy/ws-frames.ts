// An incremental WebSocket frame-header scanner (RFC 6455 section 5.2).
//
// ws's Receiver reports whole messages but not the frame-level facts the
// capture wants (when the first byte of a message arrived, how many frames
// carried it, whether RSV1 marked it compressed). This scanner reads the same
// bytes alongside the Receiver, looking only at headers and skipping
// payloads, so it costs a few comparisons per chunk.
//
// It reports one `ScannedUnit` per thing the Receiver will emit, in the order
// the Receiver emits them: a data message when its FIN frame has fully
// arrived, a control frame when it has fully arrived (control frames may sit
// between the fragments of a data message, RFC 6455 section 5.4). It does not
// validate: the Receiver rejects bad frames, and the tap stops both then.

/** One message or control frame, as seen in frame headers. */
export interface ScannedUnit {
  /** 1 text, 2 binary (the first frame's opcode), 8 close, 9 ping, 10 pong. */
  opcode: number;
  /** When the first byte of its first frame arrived (epoch ms). */
  time: number;
  /** How many frames carried it. */
  frames: number;
  /** RSV1 on its first frame: permessage-deflate compressed it. */
  compressed: boolean;
}

/** Where the scanner is within a frame. */
const enum State {
  /** Waiting for the two fixed header bytes. */
  Info,
  /** Waiting for the 16-bit extended length. */
  Length16,
  /** Waiting for the 64-bit extended length. */
  Length64,
  /** Waiting for the 4 masking-key bytes. */
  Mask,
  /** Skipping payload bytes. */
  Payload,
}

/** Scans frame headers incrementally; feed it every chunk of one direction, in order. */
export class FrameScanner {
  private state = State.Info;
  // Header bytes collected so far for the current state (at most 8).
  private readonly header = Buffer.alloc(8);
  private headerHave = 0;
  private payloadLeft = 0;
  // The frame being read.
  private frameTime = 0;
  private frameFin = false;
  private frameOpcode = 0;
  private frameRsv1 = false;
  private frameMasked = false;
  // The data message being assembled across continuation frames, if any.
  private message: ScannedUnit | undefined;

  /** Scans one chunk that arrived at `time`; returns the units completed in it, in order. */
  push(chunk: Buffer, time: number): ScannedUnit[] {
    const done: ScannedUnit[] = [];
    let at = 0;
    // A zero-length frame completes without consuming payload bytes, so the
    // loop also runs when the chunk is used up but a frame is ready to finish.
    while (at < chunk.length || (this.state === State.Payload && this.payloadLeft === 0)) {
      switch (this.state) {
        case State.Info: {
          if (this.headerHave === 0) this.frameTime = time;
          at = this.collect(chunk, at, 2);
          if (this.headerHave < 2) break;
          const b0 = this.header[0]!;
          const b1 = this.header[1]!;
          this.frameFin = (b0 & 0x80) !== 0;
          this.frameRsv1 = (b0 & 0x40) !== 0;
          this.frameOpcode = b0 & 0x0f;
          this.frameMasked = (b1 & 0x80) !== 0;
          const length = b1 & 0x7f;
          this.headerHave = 0;
          if (length === 126) this.state = State.Length16;
          else if (length === 127) this.state = State.Length64;
          else this.haveLength(length);
          break;
        }
        case State.Length16:
          at = this.collect(chunk, at, 2);
          if (this.headerHave < 2) break;
          this.headerHave = 0;
          this.haveLength(this.header.readUInt16BE(0));
          break;
        case State.Length64:
          at = this.collect(chunk, at, 8);
          if (this.headerHave < 8) break;
          this.headerHave = 0;
          this.haveLength(this.header.readUInt32BE(0) * 2 ** 32 + this.header.readUInt32BE(4));
          break;
        case State.Mask:
          at = this.collect(chunk, at, 4);
          if (this.headerHave < 4) break;
          this.headerHave = 0;
          this.state = State.Payload;
          break;
        case State.Payload: {
          const take = Math.min(this.payloadLeft, chunk.length - at);
          at += take;
          this.payloadLeft -= take;
          if (this.payloadLeft === 0) {
            const unit = this.frameDone();
            if (unit) done.push(unit);
            this.state = State.Info;
          }
          break;
        }
      }
    }
    return done;
  }

  // Copies header bytes until `need` are held; returns the new chunk offset.
  private collect(chunk: Buffer, at: number, need: number): number {
    const take = Math.min(need - this.headerHave, chunk.length - at);
    chunk.copy(this.header, this.headerHave, at, at + take);
    this.headerHave += take;
    return at + take;
  }

  private haveLength(length: number): void {
    this.payloadLeft = length;
    this.state = this.frameMasked ? State.Mask : State.Payload;
  }

  // A frame has fully arrived: returns the unit it completes, if any.
  private frameDone(): ScannedUnit | undefined {
    const opcode = this.frameOpcode;
    if (opcode >= 8) {
      return { opcode, time: this.frameTime, frames: 1, compressed: false };
    }
    if (opcode !== 0 || !this.message) {
      // A new data message (a stray continuation is counted as one; the Receiver rejects it).
      this.message = { opcode, time: this.frameTime, frames: 1, compressed: this.frameRsv1 };
    } else {
      this.message.frames += 1;
    }
    if (!this.frameFin) return undefined;
    const unit = this.message;
    this.message = undefined;
    return unit;
  }
}
