// The body sidecar, sealed (issue 34 item 6: secrets must not sit in clear
// in the files a kill -9 leaves). Bodies stream into `<out>.bodies` before
// anything knows whether they hold a secret (a JSON body is whole only at
// its end, and holding it would break the memory bound), so with redaction
// on, every byte is encrypted as it is appended: AES-256-CTR under a key
// derived from the bb home's redaction key and a nonce drawn per capture
// (stored in the journal's header). CTR encrypts at any offset alone, so a
// slice reads back without the bytes before it, and a failed write that
// moves offsets breaks nothing. The HAR is written, redacted, from the
// decrypted bytes; the key never leaves bb's home, the capture folder can.
import { createCipheriv, createHmac, randomBytes, type Cipher } from 'node:crypto';

const BLOCK = 16;

/** Body buffers under this many bytes are sealed together with their neighbours (applyToRun). */
const RUN_PIECE = 16 * 1024;

/** Encrypts (and, being CTR, decrypts) body bytes by their offset in the sidecar. */
export class BodySeal {
  private readonly key: Buffer;
  private readonly iv: Buffer;

  /** `redactKey`: the bb home's redaction key; `nonce`: the capture's, as hex. */
  constructor(redactKey: Buffer, nonce: string) {
    this.key = createHmac('sha256', redactKey).update(`bb bodies key ${nonce}`).digest();
    this.iv = createHmac('sha256', redactKey).update(`bb bodies iv ${nonce}`).digest().subarray(0, BLOCK);
  }

  /** A fresh nonce for a new capture. */
  static nonce(): string {
    return randomBytes(16).toString('hex');
  }

  /** The running cipher of appendSealed and the offset its keystream is at. */
  private running: { cipher: Cipher; at: number } | undefined;

  /** The bytes that sit (or sat) at `offset` of the sidecar, sealed or unsealed. */
  apply(bytes: Buffer, offset: number): Buffer {
    if (bytes.length === 0) return bytes;
    return this.cipherAt(offset).update(bytes);
  }

  /**
   * apply() for the writer, whose offsets follow each other: one cipher runs
   * on (a CTR keystream continues across update calls, partial blocks too),
   * so a small body costs no key schedule and counter of its own (profiled:
   * a cipher per chunk was ~4 µs of a small exchange). Any other offset
   * starts a new one.
   */
  applyInOrder(bytes: Buffer, offset: number): Buffer {
    if (bytes.length === 0) return bytes;
    if (this.running?.at !== offset) this.running = { cipher: this.cipherAt(offset), at: offset };
    this.running.at += bytes.length;
    return this.running.cipher.update(bytes);
  }

  /**
   * applyInOrder() for buffers that follow each other from `offset`: small
   * ones are sealed together (one copy, one cipher call, one output buffer
   * instead of one per chunk: a hundred h2 streams' bodies in a turn were a
   * hundred buffers for the GC), large ones alone (no extra copy). The
   * sealed bytes are the same as chunk by chunk: CTR's keystream runs on.
   */
  applyToRun(buffers: Buffer[], offset: number): Buffer[] {
    const out: Buffer[] = [];
    let at = offset;
    let from = 0;
    let small = 0;
    const sealSmall = (to: number): void => {
      if (to === from) return;
      const plain = to - from === 1 ? buffers[from]! : Buffer.concat(buffers.slice(from, to), small);
      out.push(this.applyInOrder(plain, at));
      at += plain.length;
      small = 0;
    };
    for (let i = 0; i < buffers.length; i++) {
      const b = buffers[i]!;
      if (b.length < RUN_PIECE) {
        small += b.length;
        continue;
      }
      sealSmall(i);
      from = i + 1;
      out.push(this.applyInOrder(b, at));
      at += b.length;
    }
    sealSmall(buffers.length);
    return out;
  }

  private cipherAt(offset: number): Cipher {
    const cipher = createCipheriv('aes-256-ctr', this.key, counterAt(this.iv, Math.floor(offset / BLOCK)));
    const skip = offset % BLOCK;
    if (skip > 0) cipher.update(Buffer.alloc(skip));
    return cipher;
  }
}

/** The 128-bit big-endian counter `iv + blocks`. */
function counterAt(iv: Buffer, blocks: number): Buffer {
  const out = Buffer.from(iv);
  let carry = blocks;
  for (let i = BLOCK - 1; i >= 0 && carry > 0; i--) {
    const sum = out[i]! + (carry % 256);
    out[i] = sum % 256;
    carry = Math.floor(carry / 256) + Math.floor(sum / 256);
  }
  return out;
}
