// Redaction of secrets in recorded traffic (docs/capture.md "What the proxy
// guarantees": redacted by default).
//
// A secret becomes `<redacted:XXXXXXXX>`: the first 8 hex digits of
// HMAC-SHA256(key, value), with one key per user under bb's home. The same
// secret therefore maps to the same placeholder in the old and the new
// capture, so diffs keep working while values stay out of the files.
// Only string values are redacted: `token: 5` and `prompt_tokens: 11` stay.
import { createHmac } from 'node:crypto';
import { readsAsJson, redactJsonText, redactJsonValue, scanJsonTokens } from './redact-json.js';
import { BodySeal } from './body-seal.js';
import { BoundedMemo, escapeRegExp } from '../core/index.js';
import { RestHashing } from './rest-hash.js';
import { SecretValues, type SecretFields } from './redact-values.js';
import { maskedPlaceholder, PLACEHOLDER, PLACEHOLDER_LENGTH } from './placeholder.js';

export { PLACEHOLDER_SOURCE } from './placeholder.js';

/**
 * Extra names to redact on top of the built-in lists. Each is a secret name wherever it stands: a header's name,
 * a query or form parameter's, a JSON key (a server that echoes a request's headers in JSON echoes its secrets),
 * matched in name form (secretNameForm: `session_key` = `sessionKey` = `Session-Key`).
 */
export interface RedactConfig {
  /** Extra header names whose values are redacted. */
  headers?: string[];
  /** Extra query (and form) parameter names. */
  query?: string[];
  /** Extra JSON keys whose string values are redacted. */
  json?: string[];
}

/** Headers whose values are secrets. */
export const DEFAULT_REDACTED_HEADERS = [
  'authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key',
  'x-auth-token', 'x-amz-security-token', 'x-csrf-token', 'x-xsrf-token', 'authentication-info', 'proxy-authentication-info',
];

/**
 * Headers whose value is (or names) a URL: redacted like the request URL (query and fragment). HTTP/2's `:path`
 * is the request's path and query (RFC 9113 §8.3.1): an h2 or gRPC request's query secrets stand there too.
 */
export const URL_HEADERS = ['location', 'content-location', 'referer', 'refresh', 'link', ':path'];

/** HTTP/2's authority pseudo-header: it must not hold userinfo (RFC 9113 §8.3.1), but a client may send `user:password@host`. */
const AUTHORITY_HEADER = ':authority';

/** Query parameter names and JSON keys whose string values are secrets. */
export const DEFAULT_REDACTED_KEYS = [
  'password', 'passwd', 'secret', 'client_secret', 'api_key', 'apikey',
  'access_token', 'refresh_token', 'id_token', 'token', 'jwt', 'private_key',
  // Google Identity Services posts its ID token as `credential`; AWS answers `Credentials: {SecretAccessKey, SessionToken}`; STOMP's CONNECT has `passcode`.
  'credential', 'credentials', 'passcode',
];

/**
 * Name endings that make any header, parameter or key name a secret's, in name form: `newPassword`'s kin are
 * caught by holding "password" anywhere (`password_confirmation`), these by ending in one (`userAccessToken`,
 * `X-Goog-Api-Key`, `webhook_secret`, an AWS `SecretAccessKey`, Cognito's `IdToken`).
 */
export const SECRET_NAME_ENDINGS = [
  'secret', 'apikey', 'accesstoken', 'refreshtoken', 'idtoken', 'authtoken', 'sessiontoken', 'privatekey',
  'secretkey', 'secretaccesskey', 'csrftoken', 'xsrftoken', 'codeverifier', 'clientassertion',
];

/** A name as secret names are compared: lower case, without `_`, `-`, `.` and spaces (`accessToken` = `access_token` = `Access-Token`). */
export function secretNameForm(name: string): string {
  return name.toLowerCase().replace(/[-_.\s]+/g, '');
}

/**
 * A JSON Web Token anywhere in a text (RFC 7519: base64url segments joined by dots, the first a JSON header, so
 * `eyJ`): a bearer credential whatever names it (an ID token in Google's `credential`, a token in a path or a
 * custom header, a JWE's five parts). JWT_HINT is tested first, the hot path's whole cost.
 */
const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{7}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){0,2}/g;
const JWT_HINT = 'eyJ';
/**
 * Secrets a text may hold whatever names them (`embedded`), besides a JWT: a URL's password
 * (`postgres://app:PASSWORD@db`, the password alone), a PEM private key (whole), a token of a well-known service
 * by its prefix (GitHub `ghp_…` and `github_pat_…`, Slack `xox?-…`, Stripe `sk_live_…`, OpenAI's and Anthropic's
 * `sk-…`, a Google API key `AIza…`). Each is looked for only where a plain substring test says it may be.
 */
const URL_PASSWORD = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^/\s:@"'<>]{0,256}:)([^/\s@"'<>]{1,256})@/g;
const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----/y;
const PEM_END = /-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----/y;
/** A PEM body is a few KiB (an 8192-bit RSA key 6.5); a BEGIN further than this from its END is no key. */
const PEM_MAX_BODY = 16 * 1024;
const KNOWN_TOKEN = /(?<![A-Za-z0-9_-])(?:gh[pousr]_[A-Za-z0-9]{36}[A-Za-z0-9]*|github_pat_[A-Za-z0-9_]{22}[A-Za-z0-9_]*|xox[abposr]-[A-Za-z0-9-]{10}[A-Za-z0-9-]*|[sr]k_(?:live|test)_[A-Za-z0-9]{16}[A-Za-z0-9]*|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*|AIza[0-9A-Za-z_-]{35})/g;
const KNOWN_TOKEN_HINT = /gh[pousr]_|github_pat_|xox[abposr]-|[sr]k_(?:live|test)_|sk-|AIza/;
/** Shorter texts hold none of them (a JWT is 13 characters at least). */
const SHORTEST_EMBEDDED = 13;

/**
 * Words one of which every secret's name holds (DEFAULT_REDACTED_KEYS, SECRET_NAME_ENDINGS, the secret headers),
 * any case: a body without one names no secret, and the recorder reads it no further (mentionsSecretName).
 */
const SECRET_NAME_HINTS = ['token', 'secret', 'passw', 'passcode', 'key', 'jwt', 'credential', 'verifier', 'assertion', 'authoriz', 'cookie', 'authentication'];

/**
 * In bytes a token may follow bytes that read as its characters (a protobuf field 8's tag and length: `BZ`), so
 * secretBytes reads runs of token characters and finds JWTs in them by their dots (jwtsInRun).
 */
const TOKEN_RUN = /[A-Za-z0-9_.-]{19}[A-Za-z0-9_.-]*/g;
const SHORTEST_JWT = 'eyJ'.length + 7 + '.x.'.length;

/** Kubernetes' WebSocket clients (kubectl exec) offer their bearer token as a subprotocol, base64url-encoded. */
const SUBPROTOCOL_HEADER = 'sec-websocket-protocol';
const K8S_BEARER_PROTOCOL = /(base64url\.bearer\.authorization\.k8s\.io\.)([A-Za-z0-9_-]+)/gi;

/** A parameter's raw value that opens a JSON object or array, percent-encoded or not. */
const OPENS_JSON_PARAM = /^(?:%7[Bb]|%5[Bb]|[{[])/;

/** A STOMP frame that carries credentials in its headers (STOMP 1.2 §5.1: CONNECT or STOMP, then `login`/`passcode`). */
const STOMP_CONNECT = /^(?:CONNECT|STOMP)\r?\n/;

/** Parses CLI/config specs like `header:X-Token`, `query:sig`, `json:session_key` into a RedactConfig. */
export function parseRedactSpecs(specs: string[]): RedactConfig {
  const config: Required<RedactConfig> = { headers: [], query: [], json: [] };
  for (const spec of specs) {
    const m = /^(header|query|json):(.+)$/.exec(spec);
    if (!m) throw new Error(`--redact takes header:NAME, query:NAME or json:KEY, got '${spec}'`);
    const list = m[1] === 'header' ? config.headers : m[1] === 'query' ? config.query : config.json;
    list.push(m[2]!);
  }
  return config;
}

/** Replaces secret values; made once per HAR written. */
export class Redactor {
  /** Every name that names a secret, in secretNameForm: the built-in keys and headers, and every extra name. */
  private readonly secretNames: Set<string>;
  /** isSecretName's answers by name as written (bounded: names repeat, but a peer may make up new ones). */
  private readonly secretByName = new BoundedMemo<string, boolean>(1000);
  private readonly cache = new Map<string, string>();
  /** placeholder as a function made once (embedded's replace callbacks). */
  private readonly hide = (secret: string): string => this.placeholder(secret);
  /** redactsHeader's answers by header name as written: a recorder asks for every header of every exchange, mostly the same few names. */
  private readonly redactsByName = new BoundedMemo<string, boolean>(1000);
  /** The secrets found again by value (redact-values.ts), once rememberValues turned it on. */
  private values: SecretValues | undefined;
  /** Finds, in a body, a name that may be a secret's (mentionsSecretName). */
  private readonly secretNameHint: RegExp;

  constructor(
    private readonly key: Buffer,
    config: RedactConfig = {},
  ) {
    const extra = [...(config.headers ?? []), ...(config.query ?? []), ...(config.json ?? [])];
    this.secretNames = new Set([...DEFAULT_REDACTED_KEYS, ...DEFAULT_REDACTED_HEADERS, ...extra].map(secretNameForm));
    // An extra name as given and in name form (`session_key`, `sessionkey`: `sessionKey` too, the hint ignoring case).
    const hints = [...SECRET_NAME_HINTS, ...extra.flatMap((n) => [n, secretNameForm(n)])].filter((n) => n !== '');
    this.secretNameHint = new RegExp(hints.map(escapeRegExp).join('|'), 'i');
  }

  /**
   * Turns on redaction by value (redact-values.ts): every value this redactor hides as a secret from now on is
   * remembered and hidden again wherever it stands (whole, or a token in a longer text). `journal` is told each
   * value to journal (the recorder's: its placeholder and length, never the value); a reader gives none and learns
   * the recorder's values from the journal (knowSecret).
   */
  rememberValues(journal?: (secret: SecretFields) => void): SecretValues {
    return (this.values ??= new SecretValues((value) => this.placeholderOf(value), journal));
  }

  /** A value a journal's `sec` record names: hidden by value from now on (it is found by its length and placeholder). */
  knowSecret(secret: SecretFields): void {
    this.rememberValues().know(secret);
  }

  /** True when a text (a body) holds a word of a secret's name (`token`, `password`, `key`…, and every --redact name): only then may it name one. */
  mentionsSecretName(text: string): boolean {
    return this.secretNameHint.test(text);
  }

  /**
   * True when a name (a header's, a parameter's, a JSON key) names a secret: in name form it is one of the
   * secret names, holds "password" or "passwd", or ends in one of SECRET_NAME_ENDINGS.
   */
  isSecretName(name: string): boolean {
    const known = this.secretByName.get(name);
    if (known !== undefined) return known;
    const form = secretNameForm(name);
    return this.secretByName.set(name, this.secretNames.has(form) || form.includes('password') || form.includes('passwd') || SECRET_NAME_ENDINGS.some((e) => form.endsWith(e)));
  }

  /** The placeholder for one secret value (remembered to be found by value, once rememberValues turned that on). */
  placeholder(value: string): string {
    const p = this.placeholderOf(value);
    if (this.values !== undefined && p !== value) this.values.learn(value, p);
    return p;
  }

  /** A value's placeholder, the value not remembered as a secret (a body bb cannot search, keyed so equal ones compare equal). */
  placeholderOf(value: string): string {
    if (PLACEHOLDER.test(value)) return value;
    let p = this.cache.get(value);
    if (p === undefined) {
      p = `<redacted:${createHmac('sha256', this.key).update(value, 'utf8').digest('hex').slice(0, 8)}>`;
      // Bounded: secrets repeat (one session cookie), so a small cache is plenty.
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(value, p);
    }
    return p;
  }

  /** The seal of a capture's body sidecar (body-seal.ts), keyed by this redactor's key and the capture's nonce. */
  bodySeal(nonce: string): BodySeal {
    return new BodySeal(this.key, nonce);
  }

  /** The keyed hashing of bytes past the body cap (rest-hash.ts), under this redactor's key. */
  restHashing(): RestHashing {
    return new RestHashing(this.key);
  }

  /** Raw headers (flat name, value list) with every value anyHeaderValue changes redacted. */
  head(h: string[]): string[] {
    let out: string[] | undefined;
    for (let i = 0; i + 1 < h.length; i += 2) {
      const value = this.anyHeaderValue(h[i]!, h[i + 1]!);
      if (value === h[i + 1]) continue;
      out ??= h.slice();
      out[i + 1] = value;
    }
    return out ?? h;
  }

  /** True when a header's value is a secret (the built-in headers and --redact header:NAME are secret names). */
  isSecretHeader(name: string): boolean {
    // gRPC's binary metadata names end in -bin (the value is base64): the name before it says what it holds.
    const base = name.length > 4 && name.toLowerCase().endsWith('-bin') ? name.slice(0, -4) : name;
    // A header named as a token (Authorization-Token, X-Session-Token, X-Token) carries a credential. A JSON key or
    // a parameter so named may be a page's cursor (`nextPageToken`): this ending counts for headers only.
    return this.isSecretName(base) || secretNameForm(base).endsWith('token');
  }

  /** True when headerValue may change a header's value (a secret, or a URL). */
  redactsHeader(name: string): boolean {
    const known = this.redactsByName.get(name);
    if (known !== undefined) return known;
    const lower = name.toLowerCase();
    return this.redactsByName.set(name, this.isSecretHeader(name) || URL_HEADERS.includes(lower) || lower === SUBPROTOCOL_HEADER || lower === AUTHORITY_HEADER);
  }

  /**
   * One header's value redacted: by headerValue when its name or a JWT says it may hold a secret, else the secrets
   * remembered by value in it (a session cookie sent back as `X-Session: <sid>`, `Bearer <token>` under any name).
   */
  anyHeaderValue(name: string, value: string): string {
    return this.redactsHeaderValue(name, value) ? this.headerValue(name, value) : this.knownValues(value);
  }

  /** A text (a header's or multipart field's value) with the secrets remembered by value in it hidden, whole or as tokens; itself when none. */
  knownValues(text: string): string {
    return this.values?.any ? this.values.replaceIn(text) : text;
  }

  /** True when headerValue may change this header: its name's (redactsHeader), or a JWT in its value. */
  private redactsHeaderValue(name: string, value: string): boolean {
    return this.redactsHeader(name) || (value.length >= SHORTEST_JWT && value.includes(JWT_HINT));
  }

  /**
   * Bytes (a protobuf message, a binary body or WebSocket message) with every JWT of 19 bytes or more in them
   * replaced by its placeholder padded to the token's length (`<redacted:0123abcd~~~…>`): lengths and framing
   * stay as they were, so a gRPC message still decodes. So are the secrets remembered by value as long as a
   * placeholder or longer (redact-values.ts maskBytes). The same buffer when none.
   */
  secretBytes(bytes: Buffer): Buffer {
    const masked = this.values?.any ? this.values.maskBytes(bytes) : bytes;
    return masked.indexOf(JWT_HINT, 0, 'latin1') < 0 ? masked : this.jwtsMasked(masked);
  }

  // secretBytes' JWTs.
  private jwtsMasked(bytes: Buffer): Buffer {
    const text = bytes.toString('latin1');
    let out: Buffer | undefined;
    for (const run of text.matchAll(TOKEN_RUN)) {
      for (const [from, to] of jwtsInRun(run[0])) {
        const token = run[0].slice(from, to);
        const p = this.placeholder(token);
        (out ??= Buffer.from(bytes)).write(maskedPlaceholder(p, token.length), run.index + from, 'latin1');
      }
    }
    return out ?? bytes;
  }

  /** Every secret `text` holds whatever names it (a JWT, a URL's password, a private key, a known token) replaced by its placeholder; the rest byte for byte. */
  embedded(text: string): string {
    // A value remembered as a secret, whole or as a token (redact-values.ts), whatever names it now.
    let out = this.knownValues(text);
    if (out.length < SHORTEST_EMBEDDED) return out;
    const hide = this.hide;
    if (out.includes(JWT_HINT)) out = out.replace(JWT, hide);
    if (out.includes('@') && out.includes('://')) out = out.replace(URL_PASSWORD, (_all, head: string, password: string) => `${head}${hide(password)}@`);
    if (out.includes('PRIVATE KEY-----')) out = privateKeys(out, hide);
    if (KNOWN_TOKEN_HINT.test(out)) out = out.replace(KNOWN_TOKEN, hide);
    return out;
  }

  /**
   * A string that is no secret by its name, with the secrets it holds redacted: JSON inside it (a payload
   * encoded twice, SockJS's `a["…"]` frames) as JSON, and what `embedded` finds anywhere in it. Undefined when unchanged.
   */
  inString(text: string): string | undefined {
    let out = opensLikeJson(text) ? this.jsonText(text) : undefined;
    const rest = out ?? text;
    const replaced = this.embedded(rest);
    return replaced !== rest ? replaced : out;
  }

  /**
   * A text body or a WebSocket text message redacted: as JSON (behind an XSSI or Socket.IO prefix, Engine.IO's
   * packets one by one), else what `embedded` finds in it. Undefined when unchanged.
   */
  textValue(text: string): string | undefined {
    // JSON's strings are each searched by the walk (or its token scan, when it does not parse).
    if (readsAsJson(text)) return this.jsonText(text);
    const replaced = this.embedded(STOMP_CONNECT.test(text) ? this.stompHeaders(text) : text);
    return replaced === text ? undefined : replaced;
  }

  /** A STOMP CONNECT frame (over a WebSocket: Spring, RabbitMQ) with its secret headers' values redacted (`passcode:…`). */
  private stompHeaders(frame: string): string {
    const end = frame.search(/\r?\n\r?\n/);
    const head = end < 0 ? frame : frame.slice(0, end);
    const lines = head.split('\n').map((line, i) => {
      const colon = line.indexOf(':');
      if (i === 0 || colon <= 0) return line;
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/\r$/, '');
      return this.isSecretHeader(name) ? `${name}:${this.headerValue(name, value)}${line.endsWith('\r') ? '\r' : ''}` : line;
    });
    return lines.join('\n') + (end < 0 ? '' : frame.slice(end));
  }

  /**
   * True when a query/form parameter's value is a secret: its name, or any
   * bracketed part of it (`token[]`, `password[0]`, `user[password]`).
   */
  isSecretParam(name: string): boolean {
    if (this.isSecretName(name)) return true;
    if (!name.includes('[')) return false;
    return name.split(/[[\]]+/).some((part) => part !== '' && this.isSecretName(part));
  }

  /** True when a JSON key's string value is a secret. */
  isSecretJsonKey(key: string): boolean {
    return this.isSecretName(key);
  }

  /**
   * Redacts one header value. Cookie keeps cookie names, Set-Cookie keeps its
   * attributes, Authorization keeps its scheme word ("Bearer <redacted:...>").
   */
  headerValue(name: string, value: string): string {
    const lower = name.toLowerCase();
    if (lower === 'refresh') return value.replace(/(url\s*=\s*['"]?)([^'"]*)/i, (_all, lead: string, url: string) => lead + this.url(url));
    // RFC 8288: `<URI>; params, <URI>; params` (pagination links can carry the token of the request).
    if (lower === 'link') return value.replace(/<([^>]*)>/g, (_all, url: string) => `<${this.url(url)}>`);
    if (URL_HEADERS.includes(lower)) return this.url(value);
    if (lower === SUBPROTOCOL_HEADER) return value.replace(K8S_BEARER_PROTOCOL, (_all, lead: string, token: string) => lead + this.placeholder(token));
    if (lower === AUTHORITY_HEADER) return this.authority(value);
    if (!this.isSecretHeader(name)) return this.embedded(value);
    if (lower === 'cookie') return value.split(';').map((part) => this.pairWithPlaceholder(part)).join(';');
    if (lower === 'set-cookie') {
      const semi = value.indexOf(';');
      return semi < 0 ? this.pairWithPlaceholder(value) : this.pairWithPlaceholder(value.slice(0, semi)) + value.slice(semi);
    }
    if (lower === 'authorization' || lower === 'proxy-authorization') {
      const m = /^([A-Za-z][A-Za-z0-9._~+-]*) +(\S.*)$/.exec(value);
      if (m) return `${m[1]} ${this.placeholder(m[2]!)}`;
    }
    return this.placeholder(value);
  }

  /**
   * "name=value" with the value (trimmed) a placeholder. A part without "=" is
   * a cookie without a name, sent as its bare value (RFC 6265 §5.2 step 5, as
   * browsers do): it becomes a placeholder, its white space kept. An empty value
   * stays: `sid=` (a cookie cleared) is no secret, and a placeholder would make it look set.
   */
  private pairWithPlaceholder(part: string): string {
    const eq = part.indexOf('=');
    const value = part.slice(eq + 1).trim();
    if (value === '') return part;
    if (eq >= 0) return `${part.slice(0, eq)}=${this.placeholder(value)}`;
    const at = part.indexOf(value);
    return part.slice(0, at) + this.placeholder(value) + part.slice(at + value.length);
  }

  /** An authority (`host:port`) with the userinfo a client put before its `@` redacted as a URL's password is: the password alone, or a bare token (`TOKEN@host`) whole. */
  private authority(value: string): string {
    const at = value.lastIndexOf('@');
    if (at < 0) return this.embedded(value);
    const userinfo = value.slice(0, at);
    const colon = userinfo.indexOf(':');
    const hidden = colon < 0 ? this.placeholder(userinfo) : `${userinfo.slice(0, colon + 1)}${this.placeholder(userinfo.slice(colon + 1))}`;
    return `${hidden}${value.slice(at)}`;
  }

  /**
   * Redacts a URL (absolute or a reference) like the request URL: the query's
   * secret parameters, and the fragment's when it holds parameters (OAuth's
   * implicit flow answers `#access_token=…`). The rest stays byte for byte.
   */
  url(raw: string): string {
    const hashAt = raw.indexOf('#');
    const beforeHash = hashAt < 0 ? raw : raw.slice(0, hashAt);
    const q = beforeHash.indexOf('?');
    let out = q < 0 ? this.embedded(beforeHash) : `${this.embedded(beforeHash.slice(0, q))}?${this.queryString(beforeHash.slice(q + 1))}`;
    if (hashAt >= 0) {
      const fragment = raw.slice(hashAt + 1);
      out += `#${fragment.includes('=') ? this.queryString(fragment) : this.embedded(fragment)}`;
    }
    return out;
  }

  /**
   * Redacts the values of secret parameters in a raw query string ("a=1&token=x"); keeps the rest byte for byte.
   * `;` separates parameters too (HTML 4's recommendation, which servers such as Rails and Java's path parameters
   * still honour: `a=1;token=x`); a secret's value runs to the next `&`, `;`s included, so a value holding one
   * stays hidden whole.
   */
  queryString(raw: string): string {
    return raw
      .split('&')
      .map((part) => {
        if (!part.includes(';')) return this.queryPart(part);
        const pieces = part.split(';');
        for (let i = 0; i < pieces.length; i++) {
          if (!this.isSecretPiece(pieces[i]!)) continue;
          return [...pieces.slice(0, i).map((piece) => this.queryPart(piece)), this.queryPart(pieces.slice(i).join(';'))].join(';');
        }
        return pieces.map((piece) => this.queryPart(piece)).join(';');
      })
      .join('&');
  }

  /** One raw `name=value` of a query (or a bare value) with its value redacted: a placeholder under a secret name, else the secrets in it. */
  private queryPart(part: string): string {
    const eq = part.indexOf('=');
    if (eq < 0) return this.embedded(part);
    const name = safeDecode(part.slice(0, eq));
    if (!this.isSecretParam(name)) return part.slice(0, eq + 1) + this.paramValue(part.slice(eq + 1));
    return `${part.slice(0, eq)}=${this.placeholder(safeDecode(part.slice(eq + 1)))}`;
  }

  /** True when a raw `name=value` names a secret parameter. */
  private isSecretPiece(piece: string): boolean {
    const eq = piece.indexOf('=');
    return eq >= 0 && this.isSecretParam(safeDecode(piece.slice(0, eq)));
  }

  /**
   * A decoded parameter (HAR's queryString and postData.params, split at `&` only) with its value redacted as
   * queryString redacts it in the text: `a=1;token=x` is the parameter `a` whose value `1;token=x` holds a secret's.
   */
  param<T extends { name: string; value: string }>(p: T): T {
    const name = p.name.includes(';') ? p.name.slice(p.name.lastIndexOf(';') + 1) : p.name;
    if (this.isSecretParam(name)) return { ...p, value: this.placeholder(p.value) };
    if (p.value.includes(';')) {
      const pieces = p.value.split(';');
      for (let i = 1; i < pieces.length; i++) {
        const eq = pieces[i]!.indexOf('=');
        if (eq < 0 || !this.isSecretParam(pieces[i]!.slice(0, eq))) continue;
        const before = pieces.slice(0, i).join(';');
        const secret = [pieces[i]!.slice(eq + 1), ...pieces.slice(i + 1)].join(';');
        return { ...p, value: `${this.inString(before) ?? before};${pieces[i]!.slice(0, eq)}=${this.placeholder(secret)}` };
      }
    }
    const value = this.inString(p.value);
    return value === undefined ? p : { ...p, value };
  }

  /**
   * A parameter's raw value that is no secret by its name, with the secrets it holds redacted: JSON in it (Slack
   * posts its interactions as `payload={"token":…}`), re-encoded only when something changed; else `embedded`.
   */
  private paramValue(raw: string): string {
    if (OPENS_JSON_PARAM.test(raw)) {
      const json = this.jsonText(safeDecode(raw));
      if (json !== undefined) return encodeURIComponent(json);
    }
    return this.embedded(raw);
  }

  /**
   * Redacts a parsed JSON value in place: strings under secret keys, at any
   * depth (redact-json.ts). Returns true when anything changed.
   */
  jsonValue(value: unknown): boolean {
    return redactJsonValue(value, this);
  }

  /**
   * Redacts a JSON text (behind an XSSI prefix too); the redacted text when
   * something changed, else undefined. Fails closed (redact-json.ts).
   */
  jsonText(text: string): string | undefined {
    return redactJsonText(text, this);
  }

  /** Redacts JSON Lines / NDJSON text line by line; undefined when nothing changed. */
  jsonLinesText(text: string): string | undefined {
    let changed = false;
    const lines = text.split('\n').map((line) => {
      const r = this.jsonText(line);
      if (r === undefined) return line;
      changed = true;
      return r;
    });
    return changed ? lines.join('\n') : undefined;
  }

  /**
   * Redacts the `data:` lines of an event stream's text, event by event: an event's data is its `data:` lines
   * joined by LF (HTML's "Interpreting an event stream"), so JSON may span several lines. Undefined when nothing
   * changed. Every line stays where it was: a redacted event keeps its line structure when the redaction keeps
   * its LFs (a placeholder in place), else its data goes on its first line and the others are left empty (JSON
   * followed by LFs is the same JSON).
   */
  eventStreamText(text: string): string | undefined {
    // Pieces are kept only around the lines that change: String.replace with a function holds a part per match,
    // and a stream of 2.36M events took 600 MB so.
    const data = /^(data: ?)(.*)$/gm;
    const parts: string[] = [];
    let last = 0;
    // The current event's data lines: where each value starts and the value.
    let event: Array<{ at: number; value: string }> = [];
    const flush = (): void => {
      const values = this.eventValues(event.map((line) => line.value));
      if (values !== undefined) {
        for (let i = 0; i < event.length; i++) {
          if (values[i] === event[i]!.value) continue;
          parts.push(text.slice(last, event[i]!.at), values[i]!);
          last = event[i]!.at + event[i]!.value.length;
        }
      }
      event = [];
    };
    let lineEnd = 0;
    for (let m = data.exec(text); m !== null; m = data.exec(text)) {
      if (event.length > 0 && BLANK_LINE.test(text.slice(lineEnd, m.index))) flush();
      event.push({ at: m.index + m[1]!.length, value: m[2]! });
      lineEnd = m.index + m[0].length;
    }
    if (event.length > 0) flush();
    if (parts.length === 0) return undefined;
    parts.push(text.slice(last));
    return parts.join('');
  }

  /** One event's `data:` values redacted (as many, in order); undefined when none changed. */
  private eventValues(values: string[]): string[] | undefined {
    if (values.length === 1) {
      const r = this.textValue(values[0]!);
      return r === undefined ? undefined : [r];
    }
    const joined = values.join('\n');
    const whole = this.textValue(joined);
    if (whole === undefined) {
      // Nothing in the joined data; each line on its own, as before events were read whole.
      const each = values.map((v) => this.textValue(v) ?? v);
      return each.some((v, i) => v !== values[i]) ? each : undefined;
    }
    // JSON redacted in place (placeholders where its secret strings were), when that is all the full walk redacts.
    const inPlace = this.embedded(scanJsonTokens(joined, this) ?? joined);
    const lines = inPlace.split('\n');
    if (lines.length === values.length && sameJson(inPlace, whole)) return lines;
    const wholeLines = whole.split('\n');
    if (wholeLines.length === values.length) return wholeLines;
    return [whole, ...values.slice(1).map(() => '')];
  }
}

/** A blank line, which ends an event in an event stream (any of its three line ends). */
const BLANK_LINE = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)/;

/** True when two texts parse as JSON to the same value. */
function sameJson(a: string, b: string): boolean {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
  } catch {
    return false;
  }
}

/** decodeURIComponent with '+' as space, falling back to the raw text on malformed escapes. */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** True when a text's first character past white space opens a JSON object, array or string (JSON encoded twice). */
function opensLikeJson(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x22) return true;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false;
  }
  return false;
}

/**
 * Every PEM private key block in `text` (BEGIN … END, whole) replaced by `hide`'s answer. Linear: the ENDs are
 * found once, each BEGIN takes the first END after it within PEM_MAX_BODY (a lazy `[\s\S]*?` from each of many
 * BEGINs with no END after them was quadratic: a hostile body of 1 MB took seconds).
 */
function privateKeys(text: string, hide: (secret: string) => string): string {
  const ends: Array<[number, number]> = [];
  for (let at = text.indexOf('-----END '); at >= 0; at = text.indexOf('-----END ', at + 1)) {
    PEM_END.lastIndex = at;
    if (PEM_END.exec(text)) ends.push([at, PEM_END.lastIndex]);
  }
  if (ends.length === 0) return text;
  let out = '';
  let copied = 0;
  let e = 0;
  for (let at = text.indexOf('-----BEGIN '); at >= 0; at = text.indexOf('-----BEGIN ', Math.max(at + 1, copied))) {
    if (at < copied) continue;
    PEM_BEGIN.lastIndex = at;
    if (!PEM_BEGIN.exec(text)) continue;
    const bodyFrom = PEM_BEGIN.lastIndex;
    while (e < ends.length && ends[e]![0] < bodyFrom) e++;
    if (e === ends.length) break;
    const [endAt, endTo] = ends[e]!;
    if (endAt - bodyFrom > PEM_MAX_BODY) continue;
    out += text.slice(copied, at) + hide(text.slice(at, endTo));
    copied = endTo;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * The JWTs in a run of token characters (`[A-Za-z0-9_.-]`), as [from, to) spans: each `eyJ` whose header segment
 * has 7+ more characters before its dot and a payload segment of 1+, then its signature (a JWS: three segments)
 * or, when the header names an `enc`, a JWE's three more. Bytes that read as token characters may glue two
 * tokens (a protobuf field 8's tag and length, `BZ`), so a signature ends where a new header begins. Linear: the
 * dots are walked forward once, however many `eyJ` the run holds.
 */
function jwtsInRun(run: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let next = 0;
  // The first dot after `at` and the one after it: both only move forward, so many `eyJ` before one dot share them.
  let d1 = -1;
  let d2 = -1;
  for (let at = run.indexOf(JWT_HINT); at >= 0; at = run.indexOf(JWT_HINT, at + 1)) {
    if (at < next) continue;
    if (d1 < at) {
      d1 = run.indexOf('.', at);
      // No dot after this `eyJ`: none after any later one either.
      if (d1 < 0) break;
      d2 = run.indexOf('.', d1 + 1);
    }
    if (d1 - at < 10 || d2 < 0 || d2 === d1 + 1) continue;
    let end = d2;
    for (let k = 0; k < (isJweHeader(run.slice(at, d1)) ? 3 : 1); k++) {
      const from = end + 1;
      const d = run.indexOf('.', from);
      const segmentEnd = d < 0 ? run.length : d;
      // A header starting inside this segment (glued on): this token ends there.
      const glued = run.indexOf(JWT_HINT, from);
      if (glued >= 0 && glued < segmentEnd && segmentEnd - glued >= 10 && d >= 0) {
        end = glued;
        break;
      }
      end = segmentEnd;
      if (d < 0) break;
    }
    if (end - at < PLACEHOLDER_LENGTH) continue;
    spans.push([at, end]);
    next = end;
  }
  return spans;
}

/** Whether a JWT's header segment (base64url JSON) names an `enc`: a JWE's, with five segments. */
function isJweHeader(segment: string): boolean {
  // A header is a few hundred characters (an x5c chain a few KiB); past that, no JWE's.
  if (segment.length > 8192) return false;
  const text = Buffer.from(segment, 'base64url').toString('utf8');
  if (!text.includes('"enc"')) return false;
  try {
    const header = JSON.parse(text) as unknown;
    return typeof header === 'object' && header !== null && 'enc' in header;
  } catch {
    return false;
  }
}
