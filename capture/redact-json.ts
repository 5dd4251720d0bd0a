// Secrets in JSON texts (issue 34 items 4 and 6). Fails closed: every depth
// is walked (iteratively: captured content is hostile input), a JSON text
// that does not parse (cut at the body cap, or not quite JSON) is scanned
// token by token instead of kept, and a text whose redacted form cannot be
// re-serialized (nested deeper than V8's stack) is replaced by a marker.
// Under a secret key every string below is a secret (`"password": ["…"]`).

/** What redacting JSON needs from the Redactor. */
export interface JsonSecrets {
  /** True when a key's string values (and every string under it) are secrets. */
  isSecretJsonKey(key: string): boolean;
  /** The placeholder for one secret. */
  placeholder(value: string): string;
  /** A string that is no secret by its key, with what it holds redacted (JSON inside it, JWTs); undefined when unchanged. */
  inString(value: string): string | undefined;
  /** Every secret a text holds whatever names it (a JWT, a URL's password…) replaced (the rest byte for byte). */
  embedded(text: string): string;
}

/** Prefixes servers put before JSON so a `<script>` cannot read it (XSSI): kept, the JSON after them redacted. */
const XSSI_PREFIX = /^\s*(?:\)\]\}'?,?|while\s*\(\s*1\s*\)\s*;|for\s*\(\s*;\s*;\s*\)\s*;)\s*/;

/**
 * A Socket.IO packet over Engine.IO before its JSON: the types (`4` message, then `0` connect, `2` event, `3` ack),
 * binary attachments (`451-`), a namespace (`/chat,`) and an ack id: `40{"token":…}`, `42/chat,7["login",{…}]`.
 */
const SOCKET_IO_PREFIX = /^\d{1,2}(?:\d+-)?(?:\/[^,[{"]*,)?\d*(?=[[{])/;

/** A SockJS frame of messages: `a` before a JSON array of JSON strings, each a message (`a["{\"token\":…}"]`). */
const SOCKJS_PREFIX = /^a(?=\[)/;

/** Engine.IO 4's long-polling payloads join packets with a record separator. */
const RECORD_SEPARATOR = '\x1e';

/** What stands before a text's JSON and is kept as it is: an XSSI, Socket.IO or SockJS prefix ('' for none). */
function framing(text: string): string {
  return XSSI_PREFIX.exec(text)?.[0] ?? SOCKET_IO_PREFIX.exec(text)?.[0] ?? SOCKJS_PREFIX.exec(text)?.[0] ?? '';
}

/** True when redactJsonText reads `text` as JSON (behind a prefix it knows, or as Engine.IO packets): its strings are walked one by one. */
export function readsAsJson(text: string): boolean {
  if (text.includes(RECORD_SEPARATOR)) return true;
  const first = text.slice(framing(text).length).trimStart()[0];
  return first === '{' || first === '[' || first === '"';
}

/** Redacts a JSON text; the redacted text when something changed, else undefined. */
export function redactJsonText(text: string, s: JsonSecrets): string | undefined {
  if (text.includes(RECORD_SEPARATOR)) {
    const parts = text.split(RECORD_SEPARATOR);
    const redacted = parts.map((part) => redactJsonText(part, s));
    return redacted.some((r) => r !== undefined) ? redacted.map((r, i) => r ?? parts[i]).join(RECORD_SEPARATOR) : undefined;
  }
  const prefix = framing(text);
  const body = prefix ? text.slice(prefix.length) : text;
  const first = body.trimStart()[0];
  // JSON encoded twice: a document that is one string holding JSON (`"{\"token\":…}"`).
  if (first === '"') return encodedTwice(body, prefix, s);
  if (first !== '{' && first !== '[') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    if (err instanceof RangeError) return tooDeep(text);
    const scanned = scanJsonTokens(body, s) ?? body;
    const replaced = s.embedded(scanned);
    return replaced === body ? undefined : prefix + replaced;
  }
  if (!redactJsonValue(parsed, s)) return undefined;
  try {
    return prefix + JSON.stringify(parsed);
  } catch (err) {
    if (err instanceof RangeError) return tooDeep(text);
    throw err;
  }
}

/** A JSON text that is one string: the string's own secrets redacted (JSON in it, embedded ones), re-encoded when any. */
function encodedTwice(body: string, prefix: string, s: JsonSecrets): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    const replaced = s.embedded(body);
    return replaced === body ? undefined : prefix + replaced;
  }
  if (typeof value !== 'string') return undefined;
  const inner = s.inString(value);
  return inner === undefined ? undefined : prefix + JSON.stringify(inner);
}

/** The marker that replaces a body too deep to re-serialize once redacted. */
function tooDeep(text: string): string {
  return `<redacted: JSON nested too deep to inspect, ${Buffer.byteLength(text)} bytes not kept>`;
}

/** Redacts a parsed JSON value in place; true when anything changed. */
export function redactJsonValue(value: unknown, s: JsonSecrets): boolean {
  let changed = false;
  // [container, every string under it is secret]
  const stack: Array<[object, boolean]> = [];
  if (value !== null && typeof value === 'object') stack.push([value, false]);
  while (stack.length > 0) {
    const [v, secret] = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item === 'string') {
          const red = secret ? s.placeholder(item) : s.inString(item);
          if (red === undefined) continue;
          v[i] = red;
          changed = true;
        } else if (item !== null && typeof item === 'object') stack.push([item, secret]);
      }
      continue;
    }
    const obj = v as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      const under = secret || s.isSecretJsonKey(key);
      if (typeof item === 'string') {
        const red = under ? s.placeholder(item) : s.inString(item);
        if (red === undefined) continue;
        // defineProperty: a key `__proto__` (an own property after JSON.parse) must not hit the setter.
        Object.defineProperty(obj, key, { value: red, writable: true, enumerable: true, configurable: true });
        changed = true;
      } else if (item !== null && typeof item === 'object') stack.push([item, under]);
    }
  }
  return changed;
}

/**
 * Redacts string values in a text that looks like JSON but does not parse:
 * strings are found token by token, containers tracked on a stack, and a
 * string that is a value under a secret key becomes a placeholder (kept
 * quoted; an unterminated one too). Everything else stays byte for byte.
 */
export function scanJsonTokens(text: string, s: JsonSecrets): string | undefined {
  // Per open container: is it an object, the last key read in it, is all of it secret.
  const stack: Array<{ obj: boolean; key: string | undefined; secret: boolean }> = [];
  let expectKey = false;
  let out = '';
  let copied = 0;
  let changed = false;
  const valueSecret = () => {
    const top = stack[stack.length - 1];
    return top !== undefined && (top.secret || (top.obj && top.key !== undefined && s.isSecretJsonKey(top.key)));
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      stack.push({ obj: c === '{', key: undefined, secret: valueSecret() });
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      expectKey = stack[stack.length - 1]?.obj ?? false;
    } else if (c === ':') {
      expectKey = false;
    } else if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const raw = text.slice(i + 1, Math.min(end, text.length));
      const top = stack[stack.length - 1];
      if (top?.obj && expectKey) {
        top.key = unescapeJson(raw);
      } else if (valueSecret()) {
        out += text.slice(copied, i) + JSON.stringify(s.placeholder(unescapeJson(raw)));
        copied = Math.min(end + 1, text.length);
        changed = true;
      }
      i = end;
    }
  }
  return changed ? out + text.slice(copied) : undefined;
}

/** A JSON string literal's content unescaped; the raw text when the escapes are broken. */
function unescapeJson(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
