// Secrets inside bytes bb keeps whole (issue 34 items 5 and 6): a refused
// packet's `_bb.rawPacket` and a multipart body. Both are redacted in place,
// as latin1 text so every other byte stays what crossed the wire: an HTTP/1
// head line by line (the request target like a URL, headers like headers),
// an HTTP/2 chunk by blanking the payloads that can carry a field or a body
// (HPACK blocks cannot be redacted without the connection's whole history;
// the frame headers, which show the fault, stay), a multipart part by its
// field name or a secret's value in it.
import type { Redactor } from './redact.js';

/** The client connection preface (RFC 9113 section 3.4). */
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

// Frame types whose payload carries no field and no body: kept when their
// length is the one RFC 9113 section 6 fixes (else the walk is off track and
// the payload is blanked anyway). GOAWAY keeps its 8 fixed bytes, not its debug data.
const KEPT_PAYLOAD: Record<number, (length: number) => number> = {
  2: (n) => (n === 5 ? 5 : 0), // PRIORITY
  3: (n) => (n === 4 ? 4 : 0), // RST_STREAM
  4: (n) => (n % 6 === 0 ? n : 0), // SETTINGS
  6: (n) => (n === 8 ? 8 : 0), // PING
  7: (n) => (n >= 8 ? 8 : 0), // GOAWAY
  8: (n) => (n === 4 ? 4 : 0), // WINDOW_UPDATE
};

/** A refused packet with its secrets redacted; binary bytes that are neither HTTP/1 nor HTTP/2 stay. */
export function redactRawPacket(raw: Buffer, errorCode: string, r: Redactor): Buffer {
  if (/^BB_H2_/.test(errorCode) || raw.subarray(0, H2_PREFACE.length).equals(H2_PREFACE)) return blankH2Payloads(raw);
  const firstLine = raw.subarray(0, Math.min(raw.length, 8192)).toString('latin1').split('\n', 1)[0]!;
  // A TLS ClientHello or other binary: no HTTP text to redact in.
  if (!/^[\x20-\x7e\t\r]*$/.test(firstLine) || !/\S/.test(firstLine)) return raw;
  return Buffer.from(redactHttp1Text(raw.toString('latin1'), r), 'latin1');
}

/** An HTTP/1 request or response as text: the start line's URLs, the head's headers, the body's JSON or form secrets. */
function redactHttp1Text(text: string, r: Redactor): string {
  const m = /\r?\n\r?\n/.exec(text);
  const head = m ? text.slice(0, m.index) : text;
  const body = m ? text.slice(m.index + m[0].length) : '';
  const lines = head.split('\n').map((line, i) => {
    const cr = line.endsWith('\r') ? '\r' : '';
    const content = cr ? line.slice(0, -1) : line;
    if (i === 0) return content.split(' ').map((word) => (/[?#]/.test(word) ? r.url(word) : word)).join(' ') + cr;
    const colon = content.indexOf(':');
    if (colon <= 0) return line;
    const name = content.slice(0, colon).trim();
    const lead = /^:[ \t]*/.exec(content.slice(colon))![0];
    const value = content.slice(colon + lead.length);
    const redacted = r.anyHeaderValue(name, value);
    return redacted !== value ? content.slice(0, colon) + lead + redacted + cr : line;
  });
  const redactedBody = body === '' ? '' : (r.jsonText(body) ?? r.queryString(body));
  return lines.join('\n') + (m ? m[0] : '') + redactedBody;
}

/** An h2 chunk with every payload byte that may carry a field or a body set to zero; lengths and frame headers stay. */
function blankH2Payloads(raw: Buffer): Buffer {
  const out = Buffer.from(raw);
  let pos = out.subarray(0, H2_PREFACE.length).equals(H2_PREFACE) ? H2_PREFACE.length : 0;
  while (pos < out.length) {
    if (pos + 9 > out.length) {
      out.fill(0, pos);
      break;
    }
    const length = out.readUIntBE(pos, 3);
    const type = out[pos + 3]!;
    const start = pos + 9;
    const end = Math.min(start + length, out.length);
    const kept = KEPT_PAYLOAD[type]?.(length) ?? 0;
    out.fill(0, Math.min(start + kept, end), end);
    pos = start + length;
  }
  return out;
}

/** The boundary of a multipart media type, if it names one. */
export function multipartBoundary(mimeType: string): string | undefined {
  if (!/^\s*multipart\//i.test(mimeType)) return undefined;
  return /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(mimeType)?.slice(1).find((b) => b !== undefined);
}

/**
 * A multipart body with the values of secret fields (by their
 * Content-Disposition name) replaced by placeholders, JSON parts
 * redacted, and in other fields (not files) the secrets remembered by
 * value hidden; undefined when nothing changed.
 */
export function redactMultipart(bytes: Buffer, boundary: string, r: Redactor): Buffer | undefined {
  const text = bytes.toString('latin1');
  const delimiter = `--${boundary}`;
  const parts = text.split(delimiter);
  let changed = false;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    const m = /\r?\n\r?\n/.exec(part);
    if (!m) continue;
    const head = part.slice(0, m.index);
    // The value ends before the line break that precedes the next delimiter.
    const tail = /\r?\n$/.exec(part.slice(m.index + m[0].length))?.[0] ?? '';
    const value = part.slice(m.index + m[0].length, part.length - tail.length);
    const name = /content-disposition:[^\r\n]*?\bname="([^"]*)"/i.exec(head)?.[1];
    let redacted: string | undefined;
    if (name !== undefined && r.isSecretParam(name)) {
      redacted = r.placeholder(Buffer.from(value, 'latin1').toString('utf8'));
    } else if (/content-type:\s*application\/([\w.+-]*\+)?json/i.test(head)) {
      const json = r.jsonText(Buffer.from(value, 'latin1').toString('utf8'));
      if (json !== undefined) redacted = Buffer.from(json, 'utf8').toString('latin1');
    } else if (!/\bfilename\*?=/i.test(head)) {
      // A field (not a file, whose bytes secretBytes masks at their length): a secret remembered by value, sent under this name.
      const text = Buffer.from(value, 'latin1').toString('utf8');
      const known = r.knownValues(text);
      if (known !== text) redacted = Buffer.from(known, 'utf8').toString('latin1');
    }
    if (redacted === undefined) continue;
    parts[i] = part.slice(0, m.index + m[0].length) + redacted + tail;
    changed = true;
  }
  return changed ? Buffer.from(parts.join(delimiter), 'latin1') : undefined;
}
