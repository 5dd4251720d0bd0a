// What the recorder reads of a response body: the secrets a small JSON or
// form body names (a login's `{"access_token": …}`), remembered as soon as
// the response has ended, so that a request reusing one under another name
// (`?t=<token>`, `X-Auth: <token>`) reaches the journal redacted
// (redact-values.ts). Heads are journaled redacted and a request reusing a
// token comes after the response that issued it: the recorder learns it
// before the client has the response's last byte. The body itself is
// redacted by the HAR's writer, as any; this only learns. Bounded: bodies of
// LEARN_BYTES at most, read only when they mention a secret's name.
import { decodeContent } from './body.js';
import { isFormMedia, isJsonMedia } from '../core/index.js';
import { redactJsonValue, type JsonSecrets } from './redact-json.js';
import type { Redactor } from './redact.js';

/**
 * Bytes of a response body read for secrets at most, as it crossed and decoded: a login's answer is far smaller (an
 * OAuth token response with its three tokens a few KiB), and reading costs the relay ~1 ns a byte (mentionsSecretName).
 */
export const LEARN_BYTES = 16 * 1024;

/** True for a response whose body the recorder reads for secrets: JSON or a form, by its content type. */
export function learnsFrom(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return isJsonMedia(contentType) || isFormMedia(contentType);
}

/** Remembers the secrets a body names (the values under secret names); reads no further a body that mentions none. */
export function learnSecrets(r: Redactor, body: Buffer, contentType: string, contentEncoding: string | undefined): void {
  let bytes = body;
  if (contentEncoding !== undefined) {
    const decoded = decodeContent(body, contentEncoding, false, { maxDecoded: LEARN_BYTES });
    if (decoded.undecoded !== undefined) return;
    bytes = decoded.bytes;
  }
  // The names looked for are ASCII: latin1 reads them as utf8 does, and costs less (most bodies stop here).
  if (!r.mentionsSecretName(bytes.toString('latin1'))) return;
  const text = bytes.toString('utf8');
  if (isFormMedia(contentType)) {
    r.queryString(text);
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return;
  }
  redactJsonValue(value, learner(r));
}

/** JsonSecrets that redact nothing but the values under secret names (placeholder remembers each): the rest is not searched. */
function learner(r: Redactor): JsonSecrets {
  return {
    isSecretJsonKey: (key) => r.isSecretJsonKey(key),
    placeholder: (value) => r.placeholder(value),
    inString: () => undefined,
    embedded: (text) => text,
  };
}
