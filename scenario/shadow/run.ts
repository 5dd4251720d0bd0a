// A `bb shadow` run (docs/shadow.md): the client's traffic goes through a
// recording tap to the primary, untouched, exactly as `bb capture`; the tee
// (below) copies each mirrored request to the candidate and the secondary,
// each behind its own recording proxy (mirror.ts), when the primary's
// response head arrives; a worker follows the three captures and compares
// them as they flow (compare-worker.ts). Every exchange gets a shared id
// (`_bb.shadow.id`, the primary's seq) in all three captures, so
// `bb diff primary.har candidate.har --noise secondary.har` pairs as the
// live comparison did.
import { join, resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { BbError, globMatcher, headerValue, startModuleWorker } from '../../core/index.js';
import { PROXY_DEFAULTS, type Fact } from '../../proxy/index.js';
import type { RedactConfig } from '../../capture/index.js';
import { bindRecording, type BoundRecording, type Recording } from '../record/index.js';
import { liveResponse } from '../replay/index.js';
import type { ResponseView } from '../../diff/index.js';
import { MirrorTarget, type MirrorRequest, type MirroredSocket } from './mirror.js';
import type { MirroredStream } from './mirror-h2.js';
import { routePath } from './route.js';
import { safe } from './safe.js';
import type { ShadowReport, TargetName } from './live.js';
import type { CompareWorkerSpec, FromWorker, ToWorker } from './compare-worker.js';
import { startShadowUi } from './shadow-ui.js';
import type { UiServer } from '../../ui/index.js';

/** Which requests are mirrored: safe methods, all, or safe plus routes ("POST /search", globs). */
export type MirrorPolicy = 'safe' | 'all' | string[];

/** Options of a shadow run (the CLI's flags, as data). */
export interface ShadowOptions {
  /** The build in production: it answers the client. */
  primary: string;
  /** The build under test: gets a copy of each mirrored request. */
  candidate: string;
  /** A second copy of the primary's build: what differs between it and the primary is noise. */
  secondary?: string;
  /** Where clients connect (default 127.0.0.1, a free port). */
  listen?: { host?: string; port?: number };
  /** Folder of primary.har, candidate.har, secondary.har. */
  outDir: string;
  /** Overwrite existing captures there. */
  force?: boolean;
  /** The diff's config file (rules, keys, known), as `bb diff --config`. */
  configPath?: string;
  /** Which requests to mirror (default 'safe'). */
  mirror?: MirrorPolicy;
  /** Share of exchanges mirrored, 0..1 (default 1). */
  sample?: number;
  /** Sample by a header's or cookie's value (all of a user's requests or none), instead of at random. */
  sampleBy?: { kind: 'header' | 'cookie'; name: string };
  /** Extra headers per mirror target (--header candidate:'Name: value'). */
  headers?: Partial<Record<'candidate' | 'secondary', Array<[string, string]>>>;
  /** Mirrored requests in flight per target, at most (default 256). */
  maxInFlight?: number;
  /** Bytes of mirrored requests queued per target, at most (default 64 MiB). */
  maxQueuedBytes?: number;
  /** Request bodies larger than this are not mirrored ("too large"; default 8 MiB). */
  maxMirrorBody?: number;
  /** A mirrored request not answered in this long is cut (default 30 s). */
  timeoutMs?: number;
  /** bb's home (redaction key). */
  bbHome: string;
  /** Redaction, as bb capture's (default on). */
  redact?: RedactConfig | false;
  /** Recorded bytes per body (default 16 MiB). */
  bodyCap?: number;
  /** Called with the report every `reportEveryMs` (default 500). */
  onReport?: (report: ShadowReport) => void;
  reportEveryMs?: number;
  /** Serve the live view (`--ui`) on this loopback address: the Shadow tab and the three captures' exchanges. */
  ui?: { host?: string; port?: number };
}

/** A running shadow. */
export interface Shadow {
  /** Where clients connect (the primary's tap). */
  url: string;
  /** The captures being written. */
  out: Record<TargetName, string | undefined>;
  /** The report as of the last comparison. */
  report(): ShadowReport | undefined;
  /** The live view's URL (with `ui`). */
  uiUrl?: string;
  /** Ends the run: stops taking traffic, lets mirrors finish, compares what is left, writes the captures; resolves to the final report. */
  close(graceMs?: number): Promise<ShadowReport>;
}

/** Starts a shadow run; throws a BbError (exit 2) when a target is down or a file is in the way. */
export async function startShadow(options: ShadowOptions): Promise<Shadow> {
  const outDir = resolve(options.outDir);
  const common = { bbHome: options.bbHome, force: options.force, redact: options.redact, bodyCap: options.bodyCap };
  for (const [name, url] of [['primary', options.primary], ['candidate', options.candidate], ['secondary', options.secondary]] as const) {
    if (url !== undefined) await checkReachable(name, url);
  }
  const bound: BoundRecording[] = [];
  let recs: Partial<Record<TargetName, Recording>> = {};
  try {
    const primaryBound = await bindRecording({ ...common, target: options.primary, label: 'primary', out: join(outDir, 'primary.har'), ...(options.listen ? { listen: options.listen } : {}) });
    bound.push(primaryBound);
    const candidateBound = await bindRecording({ ...common, target: options.candidate, label: 'candidate', out: join(outDir, 'candidate.har') });
    bound.push(candidateBound);
    const secondaryBound = options.secondary ? await bindRecording({ ...common, target: options.secondary, label: 'secondary', out: join(outDir, 'secondary.har') }) : undefined;
    if (secondaryBound) bound.push(secondaryBound);
    recs = { primary: await primaryBound.record(), candidate: await candidateBound.record(), ...(secondaryBound ? { secondary: await secondaryBound.record() } : {}) };
  } catch (err) {
    for (const r of Object.values(recs)) await r.discard().catch(() => {});
    for (const b of bound) await b.close().catch(() => {});
    throw err;
  }
  const primary = recs.primary!;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const mirrors: MirrorTarget[] = [
    new MirrorTarget('candidate', recs.candidate!, new URL(options.candidate).host, new URL(primary.url).host, options.headers?.candidate ?? [], timeoutMs),
    ...(recs.secondary ? [new MirrorTarget('secondary', recs.secondary, new URL(options.secondary!).host, new URL(primary.url).host, options.headers?.secondary ?? [], timeoutMs)] : []),
  ];
  const tee = new Tee(primary, mirrors, options);
  primary.proxy.bus.on((fact) => tee.fact(fact));

  const targets = { primary: options.primary, candidate: options.candidate, ...(options.secondary ? { secondary: options.secondary } : {}) };
  const spec: CompareWorkerSpec = {
    journals: Object.fromEntries(Object.entries(recs).map(([k, r]) => [k, r.journal])),
    targets,
    ...(options.configPath ? { configPath: options.configPath, configMayBeAbsent: options.ui !== undefined } : {}),
    bbHome: options.bbHome,
    everyMs: options.reportEveryMs ?? 500,
    pollMs: 50,
  };
  const worker: Worker = startModuleWorker(import.meta.url, 'compare-worker', spec);
  let last: ShadowReport | undefined;
  let workerError: Error | undefined;
  let onFinal: ((r: ShadowReport) => void) | undefined;
  const reportListeners = new Set<(r: ShadowReport) => void>();
  worker.on('message', (msg: FromWorker) => {
    if (msg.type === 'error') {
      workerError = new BbError('BB_SHADOW_COMPARE', `the live comparison failed: ${msg.message}`);
      onFinal?.(last ?? emptyReport(targets));
      return;
    }
    last = msg.report;
    options.onReport?.(msg.report);
    for (const l of reportListeners) l(msg.report);
    if (msg.final) onFinal?.(msg.report);
  });
  worker.on('error', (err) => {
    workerError = new BbError('BB_SHADOW_COMPARE', `the live comparison failed: ${err.message}`);
    onFinal?.(last ?? emptyReport(targets));
  });

  let ui: UiServer | undefined;
  if (options.ui) {
    try {
      ui = await startShadowUi(options.ui, {
        recordings: recs,
        report: () => last,
        onReport: (l) => (reportListeners.add(l), () => reportListeners.delete(l)),
        ...(options.configPath ? { configPath: options.configPath } : {}),
        configChanged: () => worker.postMessage({ type: 'config' } satisfies ToWorker),
      });
    } catch (err) {
      await worker.terminate();
      for (const r of Object.values(recs)) await r.discard().catch(() => {});
      throw err;
    }
  }

  let closing: Promise<ShadowReport> | undefined;
  return {
    url: primary.url,
    ...(ui ? { uiUrl: ui.url } : {}),
    out: { primary: primary.out, candidate: recs.candidate!.out, secondary: recs.secondary?.out },
    report: () => last,
    close(graceMs = PROXY_DEFAULTS.closeGraceMs) {
      closing ??= (async () => {
        await ui?.close();
        await primary.proxy.close(graceMs);
        await Promise.all(mirrors.map((m) => m.settle(Math.max(graceMs, 1000))));
        await Promise.all(mirrors.map((m) => m.recording.proxy.close(graceMs)));
        // The journals' last writes go out on the next turn.
        await new Promise((r) => setImmediate(r));
        const final = new Promise<ShadowReport>((res) => (onFinal = res));
        if (!workerError) worker.postMessage({ type: 'drain' });
        const report = workerError ? (last ?? emptyReport(targets)) : await final;
        await worker.terminate();
        for (const r of Object.values(recs)) await r.close(graceMs);
        if (workerError) throw workerError;
        return report;
      })();
      return closing;
    },
  };
}

function emptyReport(targets: ShadowReport['targets']): ShadowReport {
  const at = new Date().toISOString();
  const counts = { requests: 0, mirrored: 0, equal: 0, regressions: 0, noise: 0, unclassified: 0, errors: 0, skipped: {} };
  return { format: 1, targets, startedDateTime: at, endedDateTime: at, totals: counts, routes: {}, latency: {}, findings: [], regressionRate: 0 };
}

/** Any target down at start: one line, exit 2. */
async function checkReachable(name: string, url: string): Promise<void> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BbError('BB_BAD_TARGET', `--${name} needs a URL like http://127.0.0.1:3000, got '${url}'`);
  }
  if (u.protocol === 'https:') throw new BbError('BB_BAD_TARGET', `--${name} ${url}: bb shadow speaks to http:// targets (give each target's plain-HTTP address, or record one https target with bb capture)`);
  if (u.protocol !== 'http:' || u.hostname === '') throw new BbError('BB_BAD_TARGET', `--${name} needs a URL like http://127.0.0.1:3000, got '${url}'`);
  const { connect } = await import('node:net');
  const ok = await new Promise<boolean>((res) => {
    const s = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80) });
    s.setTimeout(3000, () => { s.destroy(); res(false); });
    s.once('connect', () => { s.destroy(); res(true); });
    s.once('error', () => res(false));
  });
  if (!ok) throw new BbError('BB_TARGET_DOWN', `the ${name} ${url} does not accept connections: start it (or fix the URL), then run bb shadow again`);
}

/** What the tee knows of one primary exchange. */
interface Pending {
  req: MirrorRequest;
  route: string;
  skip?: string;
  bodyBytes: number;
  requestEnded: boolean;
  responded: boolean;
  dispatched: boolean;
  /** The primary's answer (head and the start of its body), for binding. */
  status?: number;
  responseHeaders?: string[];
  responseBody: Buffer[];
  responseBytes: number;
  /** Mirror answers waiting for the primary's to finish. */
  answers: Array<{ target: MirrorTarget; view: ResponseView }>;
  primaryView?: ResponseView;
  /** An event stream: ends the mirrors' copies when the primary's stream ends. */
  streamEnd?: AbortController;
  /** WebSocket: each target's side. */
  sockets?: Promise<Array<MirroredSocket | undefined>>;
  /** HTTP/2 (one stream): true. */
  h2: boolean;
  /** HTTP/2, mirrored before the client's request ended: each target's stream, taking the rest as it crosses. */
  streams?: MirroredStream[];
}

/** How long after the primary's event stream ended the mirrors' copies are ended. */
const STREAM_END_GRACE_MS = 250;

/** Response bytes of the primary kept for binding, per exchange. */
const BIND_BODY_BYTES = 256 * 1024;

/** Reads the primary's facts and hands requests to the mirrors; never waits for them. */
class Tee {
  private readonly pending = new Map<number, Pending>();
  private readonly optIn: Array<(route: string) => boolean>;
  constructor(
    private readonly primary: Recording,
    private readonly mirrors: MirrorTarget[],
    private readonly opts: ShadowOptions,
  ) {
    const m = opts.mirror ?? 'safe';
    this.optIn = Array.isArray(m) ? m.map((g) => globMatcher(g)) : [];
  }

  fact(f: Fact): void {
    switch (f.type) {
      case 'exchange-started': {
        const id = this.primary.seqOf(f.exchangeId);
        if (id === undefined) return;
        const req: MirrorRequest = { id, connection: f.connectionId, method: f.method, target: f.target, version: f.httpVersion, rawHeaders: f.rawHeaders, body: Buffer.alloc(0), trailers: [] };
        const route = `${f.method} ${routePath(f.target)}`;
        const p: Pending = { req, route, bodyBytes: 0, requestEnded: false, responded: false, dispatched: false, responseBody: [], responseBytes: 0, answers: [], h2: f.stream !== undefined };
        p.skip = this.decide(f, route);
        this.primary.tag(f.exchangeId, p.skip ? { id, skipped: p.skip } : { id });
        this.pending.set(f.exchangeId, p);
        if (!p.skip && f.upgrade) p.sockets = Promise.all(this.mirrors.map((m) => m.openWebSocket(req)));
        return;
      }
      case 'request-body': {
        const p = this.pending.get(f.exchangeId);
        if (!p || p.skip || p.req.rawHeaders.length === 0) return;
        if (p.streams) {
          // Mirrored already: the rest of the body crosses to the targets as it crosses to the primary.
          for (const s of p.streams) s.write(Buffer.from(f.chunk));
          return;
        }
        p.bodyBytes += f.chunk.length;
        if (p.bodyBytes > (this.opts.maxMirrorBody ?? 8 << 20)) {
          this.skip(f.exchangeId, p, 'too large');
          return;
        }
        p.req.body = p.req.body.length === 0 ? Buffer.from(f.chunk) : Buffer.concat([p.req.body, f.chunk]);
        return;
      }
      case 'request-ended': {
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        p.requestEnded = true;
        p.req.trailers = f.rawTrailers;
        p.streams?.forEach((s) => s.end());
        this.maybeDispatch(f.exchangeId, p);
        return;
      }
      case 'response-started': {
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        p.responded = true;
        p.status = f.statusCode;
        p.responseHeaders = f.rawHeaders;
        // A stream lasts as long as its client stays: the mirrors' copies end when the primary's does.
        if (/^\s*text\/event-stream/i.test(headerValue(f.rawHeaders, 'content-type') ?? '')) {
          p.streamEnd = new AbortController();
          p.req.ended = p.streamEnd.signal;
        }
        this.maybeDispatch(f.exchangeId, p);
        return;
      }
      case 'response-body': {
        const p = this.pending.get(f.exchangeId);
        if (!p || p.skip || p.responseBytes >= BIND_BODY_BYTES) return;
        p.responseBody.push(Buffer.from(f.chunk.subarray(0, BIND_BODY_BYTES - p.responseBytes)));
        p.responseBytes += f.chunk.length;
        return;
      }
      case 'exchange-completed':
      case 'exchange-failed':
      case 'exchange-aborted': {
        const p = this.pending.get(f.exchangeId);
        if (!p) return;
        if (p.sockets) {
          // A WebSocket's exchange ends when it closes: close each target's side too.
          void p.sockets.then((ss) => ss.forEach((s) => s?.close()));
          this.pending.delete(f.exchangeId);
          return;
        }
        if (p.streams && f.type !== 'exchange-completed') p.streams.forEach((s) => s.abort());
        else p.streams?.forEach((s) => s.end());
        p.streams = undefined;
        p.requestEnded = true;
        p.responded = true;
        this.maybeDispatch(f.exchangeId, p);
        // Late events already on their way still arrive: the copies end a moment after the primary's stream.
        const end = p.streamEnd;
        if (end) setTimeout(() => end.abort(), STREAM_END_GRACE_MS).unref();
        if (f.type === 'exchange-completed' && p.status !== undefined && p.responseHeaders) {
          p.primaryView = liveResponse(p.status, p.responseHeaders, Buffer.concat(p.responseBody)).view;
          for (const a of p.answers) a.target.bind(p.primaryView, a.view);
        }
        p.responseBody = [];
        p.answers = [];
        // Answers still to come bind through the closure send() holds on `p`.
        this.pending.delete(f.exchangeId);
        return;
      }
      case 'ws-message': {
        if (f.direction !== 'send') return;
        const p = this.pending.get(f.exchangeId);
        if (!p?.sockets) return;
        const data = Buffer.from(f.data);
        void p.sockets.then((ss) => {
          for (const s of ss) {
            if (f.opcode === 8) s?.close(f.closeCode, f.closeReason);
            else s?.send(f.opcode, data);
          }
        });
        return;
      }
      case 'connection-closed':
        for (const m of this.mirrors) m.connectionClosed(f.connectionId);
        return;
      default:
        return;
    }
  }

  /** Why a request is not mirrored, or undefined. */
  private decide(f: Extract<Fact, { type: 'exchange-started' }>, route: string): string | undefined {
    // A server push is the server's own promise, not a request of the client's.
    if (f.pushedBy !== undefined) return 'server push';
    const policy = this.opts.mirror ?? 'safe';
    if (policy !== 'all' && !safe(f.method, f.rawHeaders) && !this.optIn.some((m) => m(route))) return 'unsafe';
    const share = this.opts.sample ?? 1;
    if (share < 1) {
      const by = this.opts.sampleBy;
      const key = by ? (by.kind === 'header' ? headerValue(f.rawHeaders, by.name) : cookieValue(headerValue(f.rawHeaders, 'cookie'), by.name)) : undefined;
      const x = key !== undefined ? fraction(key) : by ? 1 : Math.random();
      if (x >= share) return 'sampled out';
    }
    return undefined;
  }

  private skip(exchangeId: number, p: Pending, why: string): void {
    p.skip = why;
    p.req.body = Buffer.alloc(0);
    this.primary.tag(exchangeId, { id: p.req.id, skipped: why });
  }

  private maybeDispatch(exchangeId: number, p: Pending): void {
    // An h2 stream goes at the response head even while its request is still arriving (a streaming call).
    if (p.dispatched || p.skip || p.sockets || (!p.requestEnded && !p.h2) || !p.responded) return;
    p.dispatched = true;
    const cap = this.opts.maxInFlight ?? 256;
    const bytes = this.opts.maxQueuedBytes ?? 64 << 20;
    // All targets or none: a comparison needs every answer.
    if (this.mirrors.some((m) => m.inFlight >= cap || m.queuedBytes + p.req.body.length > bytes)) {
      this.skip(exchangeId, p, 'queue full');
      return;
    }
    const live = !p.requestEnded;
    const streams: MirroredStream[] = [];
    for (const m of this.mirrors) {
      const onAnswer = (view: ResponseView | undefined) => {
        if (!view) return;
        if (p.primaryView) m.bind(p.primaryView, view);
        else p.answers.push({ target: m, view });
      };
      if (!p.h2) m.send(p.req, onAnswer);
      else {
        const s = m.sendH2(p.req, live, onAnswer);
        if (s) streams.push(s);
      }
    }
    if (live) p.streams = streams;
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A stable fraction 0..1 of a string (FNV-1a), so one user's requests are all in or all out. */
function fraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h / 0x1_0000_0000;
}
