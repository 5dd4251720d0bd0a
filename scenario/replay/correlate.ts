// Correlation (docs/replay.md "Correlation: following the server's ids"): bind
// each value the server issued to where it was issued (exchange + place), find
// where the client sent it back, and on replay put the target's value from the
// same place in its stead. Built offline over the original's timeline (requests
// at their start, responses at their end, WebSocket messages where they
// crossed); learned online as the target's responses arrive.
//
// A value the client sent before any server issued it is the client's own
// (an id it made up, echoed back): it is never bound. Redacted placeholders
// are values like any other: a Set-Cookie the server set is replayed with
// the target's cookie. A placeholder nobody issued is a client secret: it
// must come from --header or the config's replay.values, else the replay
// stops before sending anything.
import { BbError, isFormMedia } from '../../core/index.js';
import type { PlannedExchange, ReplayPlan } from './plan.js';
import { grpcMessageBytes, messageValues, parseLooseJson, protoTokens, recordedResponse, requestTokens, responseValues, rewriteHeaderValue, rewriteProtoMessage, rewriteTarget, rewriteTokens, setCookiePair, streamMessageValues, textEncoding, tokensOf, type IssuedValue, type ResponseView } from '../../diff/index.js';
import { requestParts, WIRE_HEADERS, type RequestParts } from './request.js';
import { placeholdersIn } from './values.js';

/** One binding as the report shows it. */
export interface Rewritten {
  /** Where the value was issued: the exchange's key and the place in its response. */
  from: { entry: string; path: string };
  /** How many times the target's value replaced it. */
  uses: number;
}

interface Binding {
  value: string;
  exchange: number;
  place: string;
}

/** What to replace in one request or message. */
export type Replacements = ReadonlyMap<string, string>;


/** Bytes (a gRPC or binary WebSocket message) as a body whose text checkSecrets reads for placeholders. */
const bytesAsBody = (bytes: Buffer): RequestParts => ({ method: 'MSG', target: '', headers: [], body: { text: bytes.toString('latin1'), base64: false, mime: 'application/octet-stream' } });

/** Names where a placeholder sits in a request, for the error that asks for it. */
function whereIs(parts: RequestParts, placeholder: string): string {
  for (const [n, v] of parts.headers) {
    if (!v.includes(placeholder)) continue;
    if (n.toLowerCase() === 'cookie') {
      const name = v.split(';').find((p) => p.includes(placeholder))?.split('=')[0]?.trim();
      return `cookie ${name}: give it in the config's "replay": { "values": { "${name}": "…" } }`;
    }
    return `header ${n}: give it with --header '${n}: ${/^[A-Za-z]+ </.test(v) ? v.split(' ')[0] + ' …' : '…'}'`;
  }
  if (parts.target.includes(placeholder)) {
    const param = new URLSearchParams(parts.target.split('?')[1] ?? '');
    const name = [...param.entries()].find(([, v]) => v === placeholder)?.[0] ?? 'the URL';
    return `query parameter ${name}: give it in the config's "replay": { "values": { "${name}": "…" } }`;
  }
  const json = parts.body ? parseLooseJson(parts.body.text) : undefined;
  const key = json ? keyHolding(json.value, placeholder) : undefined;
  const name = key ?? [...new URLSearchParams(parts.body?.text ?? '')].find(([, v]) => v === placeholder)?.[0] ?? 'body';
  return `${key ? 'JSON body field' : 'body field'} ${name}: give it in the config's "replay": { "values": { "${name}": "…" } }`;
}

function keyHolding(v: unknown, placeholder: string, depth = 0): string | undefined {
  if (depth > 64 || v === null || typeof v !== 'object') return undefined;
  for (const [k, item] of Object.entries(v)) {
    if (typeof item === 'string' && item.includes(placeholder)) return k;
    const inner = keyHolding(item, placeholder, depth + 1);
    if (inner) return inner;
  }
  return undefined;
}

/** Options of the correlation. */
export interface CorrelateOptions {
  /** Follow server-issued values (default true; --no-correlate turns it off). */
  correlate: boolean;
  /** --header overrides: their placeholders need no explaining. */
  headers: ReadonlyArray<[string, string]>;
  /** replay.values from the config: a placeholder, or a field/parameter name, → the real value. */
  values: Readonly<Record<string, string>>;
  /** The capture, for messages. */
  file: string;
  /**
   * The placeholder redaction gives a value (bb's keyed hash), when the key is
   * known: a value issued in the clear (a token in a text body) and sent back
   * where it was redacted (a `token` query parameter) is still the same value.
   */
  placeholderOf?: (value: string) => string;
}

/** Fills a secret map from replay.values given by field name: the placeholders those fields hold. */
function secretsByName(parts: RequestParts, values: Readonly<Record<string, string>>, secrets: Map<string, string>): void {
  const names = Object.keys(values).filter((k) => !k.startsWith('<redacted:'));
  if (names.length === 0) return;
  const lower = new Map(names.map((n) => [n.toLowerCase(), values[n]!]));
  const visit = (k: string, v: unknown) => {
    const real = lower.get(k.toLowerCase());
    if (real !== undefined && typeof v === 'string') for (const p of placeholdersIn(v)) secrets.set(p, real);
  };
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64 || v === null || typeof v !== 'object') return;
    for (const [k, item] of Object.entries(v)) {
      visit(k, item);
      walk(item, depth + 1);
    }
  };
  for (const [k, v] of new URLSearchParams(parts.target.split('?')[1] ?? '')) visit(k, v);
  for (const [n, v] of parts.headers) {
    if (n.toLowerCase() !== 'cookie') continue;
    for (const part of v.split(';')) {
      const pair = setCookiePair(part);
      if (pair) visit(pair.name, pair.value);
    }
  }
  if (parts.body && !parts.body.base64) {
    const json = parseLooseJson(parts.body.text);
    if (json) walk(json.value, 0);
    else for (const [k, v] of new URLSearchParams(parts.body.text)) visit(k, v);
  }
}

/** The correlation of one plan: bindings, uses, and what the target has issued so far. */
export class Correlation {
  // Built from the plan once; shared by fresh() copies (no run changes them).
  private readonly bindings: Binding[];
  private readonly byValue: Map<string, Binding>;
  /** exchange → its bindings, by place (what to learn from its live response). */
  private readonly issuedBy: Map<number, Map<string, Binding[]>>;
  /** exchange → values its request uses; "i/k" → values message k uses. */
  private readonly uses: Map<string, Binding[]>;
  private readonly secrets: Map<string, string>;
  // One run's: what the target issued, and how often each binding's live value was sent.
  private readonly learned = new Map<Binding, string>();
  private readonly counts = new Map<Binding, number>();

  /** Builds the tables from the plan (`from`: share another correlation's instead). */
  constructor(private readonly plan: ReplayPlan, private readonly opts: CorrelateOptions, from?: Correlation) {
    this.bindings = from?.bindings ?? [];
    this.byValue = from?.byValue ?? new Map();
    this.issuedBy = from?.issuedBy ?? new Map();
    this.uses = from?.uses ?? new Map();
    this.secrets = from?.secrets ?? new Map();
    if (!from) this.build();
  }

  /** A correlation for another run of the same plan: the tables are not built again, nothing learned yet. */
  fresh(): Correlation {
    return new Correlation(this.plan, this.opts, this);
  }

  private bind(v: IssuedValue, exchange: number, clientSent: Set<string>): void {
    if (this.byValue.has(v.value) || clientSent.has(v.value)) return;
    this.add({ value: v.value, exchange, place: v.place });
    if (this.opts.placeholderOf && !v.value.startsWith('<redacted:')) {
      const p = this.opts.placeholderOf(v.value);
      if (!this.byValue.has(p) && !clientSent.has(p)) this.add({ value: p, exchange, place: v.place });
    }
  }

  private add(b: Binding): void {
    this.bindings.push(b);
    this.byValue.set(b.value, b);
    const mine = this.issuedBy.get(b.exchange) ?? new Map<string, Binding[]>();
    this.issuedBy.set(b.exchange, mine);
    mine.set(b.place, [...(mine.get(b.place) ?? []), b]);
  }

  private noteUses(key: string, tokens: string[], clientSent: Set<string>): void {
    const used = new Set<Binding>();
    for (const t of tokens) {
      const b = this.byValue.get(t);
      if (b) used.add(b);
      else clientSent.add(t);
    }
    if (used.size) this.uses.set(key, [...used]);
  }

  private build(): void {
    type Event = { pos: number; order: number; run: () => void };
    const events: Event[] = [];
    const clientSent = new Set<string>();
    const overridden = new Set(this.opts.headers.map(([n]) => n.toLowerCase()));
    for (const [k, v] of Object.entries(this.opts.values)) if (k.startsWith('<redacted:')) this.secrets.set(k, v);
    for (const ex of this.plan.exchanges) {
      const parts = requestParts(ex.entry.request);
      events.push({
        pos: ex.start,
        order: 0,
        run: () => {
          secretsByName(parts, this.opts.values, this.secrets);
          const sent = { ...parts, headers: parts.headers.filter(([n]) => !overridden.has(n.toLowerCase())) };
          // A gRPC call's body is its client messages, each checked where it was sent (a bidi call sends back what its own answers issued).
          const { body: _messages, ...head } = sent;
          this.checkSecrets(ex, ex.entry._grpcMessages ? head : sent);
          // Framing and connection headers are the wire's, not values a client sends back.
          if (this.opts.correlate) this.noteUses(String(ex.i), requestTokens({ ...sent, headers: sent.headers.filter(([n]) => !WIRE_HEADERS.has(n.toLowerCase())) }), clientSent);
        },
      });
      // A WebSocket's 101 arrives before its messages; an HTTP response at the exchange's end.
      if (this.opts.correlate) events.push({ pos: ex.ws ? ex.start : ex.end, order: 1, run: () => responseValues(recordedResponse(ex.entry)).forEach((v) => this.bind(v, ex.i, clientSent)) });
      this.grpcEvents(ex, events, clientSent);
      let r = 0;
      ex.ws?.messages.forEach((m, k) => {
        if (m.type === 'receive') {
          const rr = m.opcode === 1 ? r : -1;
          if (m.opcode === 1 || m.opcode === 2 || m.opcode === 9 || m.opcode === 10) r++;
          if (rr >= 0 && this.opts.correlate) events.push({ pos: m.pos, order: 1, run: () => messageValues(m.data, rr).forEach((v) => this.bind(v, ex.i, clientSent)) });
        } else if (m.opcode === 2) {
          events.push({ pos: m.pos, order: 0, run: () => this.checkSecrets(ex, bytesAsBody(Buffer.from(m.data, 'base64')), `client WebSocket message ${k + 1} of `) });
        } else if (m.opcode === 1) {
          events.push({
            pos: m.pos,
            order: 0,
            run: () => {
              // A client message's JSON is redacted like a body: its secrets are asked for by field name too.
              const asBody: RequestParts = { method: 'WS', target: '', headers: [], body: { text: m.data, base64: false, mime: 'application/json' } };
              secretsByName(asBody, this.opts.values, this.secrets);
              this.checkSecrets(ex, asBody, `client WebSocket message ${k + 1} of `);
              if (this.opts.correlate) this.noteUses(`${ex.i}/${k}`, tokensOf(m.data), clientSent);
            },
          });
        }
      });
    }
    events.sort((a, b) => a.pos - b.pos || a.order - b.order);
    for (const e of events) e.run();
  }

  /**
   * A gRPC call's messages on the timeline where they crossed (the plan's positions, grpcPos): the r-th server
   * message binds what it issued (`grpc[r]:…`, the places a call's answer names), the k-th client message notes
   * what it sends back (`i/gk`), so a bidi call's message sends back what the target's previous message issued.
   * Each client message is checked for secrets where it was sent (with correlation off too): its bytes hold a
   * masked JWT as a padded placeholder (capture/redact.ts secretBytes).
   */
  private grpcEvents(ex: PlannedExchange, events: Array<{ pos: number; order: number; run: () => void }>, clientSent: Set<string>): void {
    let r = 0;
    let k = 0;
    for (const [j, m] of (ex.entry._grpcMessages ?? []).entries()) {
      const bytes = grpcMessageBytes(m);
      const at = ex.grpcPos?.[j];
      const n = m.type === 'receive' ? r++ : k++;
      if (!bytes) continue;
      if (m.type === 'receive') {
        if (this.opts.correlate) events.push({ pos: at ?? ex.end, order: 1, run: () => streamMessageValues(bytes, n).forEach((v) => this.bind(v, ex.i, clientSent)) });
        continue;
      }
      events.push({
        pos: at ?? ex.start,
        order: 0,
        run: () => {
          this.checkSecrets(ex, bytesAsBody(bytes), `client gRPC message ${n + 1} of `);
          if (this.opts.correlate) this.noteUses(`${ex.i}/g${n}`, protoTokens(bytes), clientSent);
        },
      });
    }
  }

  /** Stops the replay (before anything is sent) for a client secret nobody can supply. */
  private checkSecrets(ex: PlannedExchange, parts: RequestParts, what = ''): void {
    const body = !parts.body ? '' : parts.body.base64 ? Buffer.from(parts.body.text, 'base64').toString('latin1') : parts.body.text;
    const texts = [parts.target, ...parts.headers.map(([, v]) => v), body];
    for (const text of texts) {
      for (const p of placeholdersIn(text)) {
        if (this.secrets.has(p) || (this.opts.correlate && this.byValue.has(p))) continue;
        throw new BbError(
          'BB_REPLAY_SECRET',
          `${this.opts.file}: ${what}${ex.key} ${ex.entry.request.method} ${requestParts(ex.entry.request).target.split('?')[0]} carries a redacted value ${p} that no server response explains, in ${whereIs(parts, p)}. Nothing was sent.`,
        );
      }
    }
  }

  /** Learns the target's values from the live response of exchange i. */
  learnResponse(i: number, view: ResponseView): void {
    const mine = this.issuedBy.get(i);
    if (!mine) return;
    this.learnAt(mine, responseValues(view));
  }

  /** Learns from the r-th message the target sent on gRPC call i, as it came. */
  learnGrpcMessage(i: number, r: number, message: Uint8Array): void {
    const mine = this.issuedBy.get(i);
    if (mine) this.learnAt(mine, streamMessageValues(message, r));
  }

  /** Learns from the r-th text message the target's WebSocket sent on exchange i. */
  learnMessage(i: number, r: number, text: string): void {
    const mine = this.issuedBy.get(i);
    if (mine) this.learnAt(mine, messageValues(text, r));
  }

  private learnAt(mine: Map<string, Binding[]>, values: IssuedValue[]): void {
    const at = new Map<string, string>();
    for (const v of values) if (!at.has(v.place)) at.set(v.place, v.value);
    for (const [place, bs] of mine) {
      const live = at.get(place);
      if (live !== undefined) for (const b of bs) this.learned.set(b, live);
    }
  }

  /**
   * How many server messages of WebSocket exchange i must have arrived before its client message k carries the
   * values it sends back from them (a value issued at `ws[r]` needs r + 1); 0 when it sends back none.
   */
  issuedBefore(i: number, k: number): number {
    let count = 0;
    for (const b of this.uses.get(`${i}/${k}`) ?? []) {
      const r = b.exchange === i ? /^ws\[(\d+)\]/.exec(b.place) : null;
      if (r) count = Math.max(count, Number(r[1]) + 1);
    }
    return count;
  }

  /** The replacements for exchange i's request (or message k of its WebSocket; with `grpc`, client message k of its call). */
  replacementsFor(i: number, k?: number, grpc = false): Replacements {
    const map = new Map(this.secrets);
    for (const b of this.uses.get(k === undefined ? String(i) : grpc ? `${i}/g${k}` : `${i}/${k}`) ?? []) {
      const live = this.learned.get(b);
      if (live !== undefined) map.set(b.value, live);
    }
    return map;
  }

  /** Rewrites a request's parts with `map`; counts the uses. */
  rewriteRequest(parts: RequestParts, map: Replacements): RequestParts {
    if (map.size === 0) return parts;
    const used: string[] = [];
    const take = (r: { text: string; uses: string[] }) => {
      used.push(...r.uses);
      return r.text;
    };
    const target = take(rewriteTarget(parts.target, map));
    const headers = parts.headers.map(([n, v]): [string, string] => {
      // Host and framing follow the target and the body (wireRequest), not the server's values.
      if (WIRE_HEADERS.has(n.toLowerCase())) return [n, v];
      if (n.toLowerCase() !== 'cookie') return [n, take(rewriteHeaderValue(n, v, map))];
      // Cookie values are replaced whole (they may hold '=' or ':'), else token by token.
      const cookie = v
        .split(';')
        .map((part) => {
          const pair = setCookiePair(part);
          const next = pair ? map.get(pair.value) : undefined;
          if (pair && next !== undefined) {
            used.push(pair.value);
            return `${part.slice(0, part.indexOf('=') + 1)}${next}`;
          }
          return take(rewriteTokens(part, map));
        })
        .join(';');
      return [n, cookie];
    });
    let body = parts.body;
    if (body && !body.base64) {
      body = { ...body, text: take(rewriteTokens(body.text, map, textEncoding(body.text, body.mime))) };
    }
    this.count(used);
    return { ...parts, target, headers, ...(body ? { body } : {}) };
  }

  /** Rewrites a client gRPC message (as the capture holds it, decompressed); the message itself when nothing changed. */
  rewriteGrpcMessage(message: Buffer, map: Replacements): Buffer {
    if (map.size === 0) return message;
    const r = rewriteProtoMessage(message, map);
    this.count(r.uses);
    return r.uses.length ? Buffer.from(r.bytes) : message;
  }

  /** Rewrites a client WebSocket text message. */
  rewriteMessage(text: string, map: Replacements): string {
    if (map.size === 0) return text;
    const r = rewriteTokens(text, map, textEncoding(text));
    this.count(r.uses);
    return r.text;
  }

  private count(used: string[]): void {
    for (const v of used) {
      const b = this.byValue.get(v);
      if (b && this.learned.has(b)) this.counts.set(b, (this.counts.get(b) ?? 0) + 1);
    }
  }

  /** The bindings that were used, for the report. */
  rewritten(): Rewritten[] {
    return this.bindings.filter((b) => this.counts.has(b)).map((b) => ({ from: { entry: this.plan.exchanges[b.exchange]!.key, path: b.place }, uses: this.counts.get(b)! }));
  }
}

