// The hash of what the body cap did not keep (issue 37 item 6: past the cap a
// body is compared by hash). A body or WebSocket message longer than the cap
// keeps its first bytes; the bytes past them stream through unrecorded, but
// a running SHA-256 of them is taken as they cross, so `bb diff` and
// `bb shadow` can still tell a difference past the cap from none.
//
// Which bytes: a body's bytes as its content-coding carries them, transfer
// framing removed (HTTP/1.1 chunk sizes, h2 DATA frames, TLS): the very bytes
// the kept prefix holds, so prefix + rest is the body, however the server
// split it. A WebSocket message's payload bytes, inflated when
// permessage-deflate compressed it (the kept bytes are inflated too). Only
// the bytes past the cap are hashed: a body under it never touches a hash.
//
// Redaction: the hash of a short rest (a closing `"}`, a 6-digit code) could
// be found by trying values, so with redaction on the value written is not
// the SHA-256 but HMAC-SHA256 of it under a key derived from the bb home's
// redaction key (the key that makes `<redacted:…>` placeholders): without
// the key nothing can be tried. Captures redacted under the same key (one
// user's old and new capture, shadow's three) compare; under other keys the
// key ids differ and the rest is not compared (never a false difference).
import { createHash, createHmac, type Hash } from 'node:crypto';

/** The scheme of a rest hash recorded with --no-redact: `sha256:HEX`. */
const PLAIN = 'sha256';
/** The scheme with redaction on: `hmac-sha256:KEYID:HEX`. */
const KEYED = 'hmac-sha256';

/** Turns SHA-256 digests of bytes past the cap into the value a capture records (`_bb.restHash`). */
export class RestHashing {
  private readonly key: Buffer | undefined;
  private readonly keyId: string | undefined;

  /** `redactKey`: the bb home's redaction key when the capture is redacted; absent with --no-redact. */
  constructor(redactKey?: Buffer) {
    if (!redactKey) return;
    this.key = createHmac('sha256', redactKey).update('bb rest hash key').digest();
    // Names the key without revealing it, so captures under other keys are told apart.
    this.keyId = createHmac('sha256', redactKey).update('bb rest hash key id').digest('hex').slice(0, 8);
  }

  /** A fresh running hash for the bytes past the cap of one body. */
  static start(): Hash {
    return createHash('sha256');
  }

  /** The recorded value for the digest of the bytes past the cap. */
  value(digest: Buffer): string {
    if (!this.key) return `${PLAIN}:${digest.toString('hex')}`;
    return `${KEYED}:${this.keyId}:${createHmac('sha256', this.key).update(digest).digest('hex')}`;
  }
}

/** The scheme part of a rest hash (`sha256`, `hmac-sha256:KEYID`): two values compare only under the same one. */
export function restHashScheme(value: string): string {
  return value.slice(0, value.lastIndexOf(':'));
}
