// bb replay (docs/replay.md): re-drive the client side of a capture
// against another server, through bb's own recording proxy, so the output
// is a capture like any other. Read → plan (plan.ts) → correlate
// (correlate.ts: stops here, before anything is sent, for a client
// secret nobody supplies) → check the target is up → record while the
// driver (drive.ts) runs → finalize the capture, whatever happened.
import { BbError, parseOrigin } from '../../core/index.js';
import { loadRedactKey, readCapture, Redactor, type RedactConfig } from '../../capture/index.js';
import { planReplay, type ReplayPlan } from './plan.js';
import { Correlation, type Rewritten } from './correlate.js';
import { driveReplay, type DriveReplayResult } from './drive.js';
import { startRecording } from '../record/index.js';
import { probeUpstream, UPSTREAM_VERIFY_HINT, type UpstreamTlsOptions } from '../../proxy/index.js';
import { isHttp2, speaksHttp2 } from './h2.js';
import { plural } from '../../diff/index.js';

/** How to pace a replay: asap keeps the order only; original keeps the gaps; a number scales them (2 = twice as fast). */
export type ReplayPace = 'asap' | 'original' | number;

/** Options of replayCapture. */
export interface ReplayOptions {
  /** The server to replay against, e.g. "http://127.0.0.1:3001". */
  target: string;
  /** Where the new capture goes (required: the CLI defaults it to captures/replay-<time>.har). */
  out: string;
  /** Overwrite an existing `out`. */
  force?: boolean;
  /** Pacing (default asap). */
  pace?: ReplayPace;
  /** WebSocket pacing: wait for the server's messages (default) or keep the original gaps. */
  ws?: 'wait' | 'timing';
  /** Headers set on every request, replacing any of the same name ('Authorization', 'Bearer …'). */
  headers?: ReadonlyArray<[string, string]>;
  /** Follow server-issued values (default true). */
  correlate?: boolean;
  /** Values for redacted client secrets: by placeholder ("<redacted:…>") or by field / parameter name. */
  values?: Readonly<Record<string, string>>;
  /** bb's home (the redaction key: the same secret gets the same placeholder as in the original). */
  bbHome: string;
  /** TLS to an https target: CAs to trust on top of Node's, or no verification (`--upstream-ca`, `--insecure-upstream`). */
  upstreamTls?: UpstreamTlsOptions;
  /** Redaction of the new capture (default on; false keeps values). */
  redact?: RedactConfig | false;
  /** The new capture's label (default "replay"). */
  label?: string;
  /** The server's HOME, recorded for the <HOME> placeholder (bb compare sets it). */
  serverHome?: string;
  /** Bound on each wait for the target (a WebSocket message, another lane), ms (default 5000). */
  waitMs?: number;
  /** Bound on one HTTP exchange, ms (default 30 000): past it the exchange is cut (--timeout). */
  timeoutMs?: number;
  /** Exchanges done so far, for a progress line. */
  onProgress?: (done: number, total: number) => void;
  /** Stops the replay; the capture is still written. */
  signal?: AbortSignal;
}

/** What a replay did (the `--json` report is this minus `out`'s siblings). */
export interface ReplaySummary {
  /** The capture written. */
  out: string;
  /** The target replayed against. */
  target: string;
  /** Exchanges that got a response (whatever its status). */
  replayed: number;
  /** Exchanges that got none, and why. */
  failed: Array<{ entry: string; reason: string }>;
  /** WebSocket messages sent and received. */
  webSocketMessages: number;
  /** Server-issued values followed: where each was issued, and how often the target's value replaced it. */
  rewritten: Rewritten[];
  /** Entries of the capture not replayed, and why. */
  skipped: Array<{ entry: string; reason: string }>;
  /** Bounded waits that ran out. */
  timeouts: DriveReplayResult['timeouts'];
  /** Exchanges cut before their response ended: `client` as the original client did (not a failure), `timeout` by --timeout (also in failed). */
  cut: DriveReplayResult['cut'];
  /** 0 every exchange got a response, 1 some did not. */
  exitCode: 0 | 1;
  /** The one summary line. */
  line: string;
  /** What the user should know about how it went (a target without HTTP/2), one sentence each. */
  notes: string[];
}

/** A capture read, planned and checked for secrets, ready to replay against any number of servers. */
export interface PreparedReplay {
  /** The capture. */
  readonly path: string;
  /** The plan. */
  readonly plan: ReplayPlan;
  /** A fresh correlation for one run (what it learns belongs to one target). */
  correlation(): Correlation;
}

/** Reads and plans a capture; throws a BbError (before anything is sent) when it cannot be replayed. */
export async function prepareReplay(path: string, options: Pick<ReplayOptions, 'headers' | 'values' | 'correlate'> & { bbHome?: string } = {}): Promise<PreparedReplay> {
  const har = await readCapture(path, { allowIncomplete: true });
  const plan = planReplay(har, path);
  // The capture's own key when it was redacted here: then a value redacted in a request is matched to its issue in the clear.
  const redactor = options.bbHome !== undefined && har.log._bb?.redacted !== false ? new Redactor(loadRedactKey(options.bbHome)) : undefined;
  const opts = {
    correlate: options.correlate ?? true,
    headers: options.headers ?? [],
    values: options.values ?? {},
    file: path,
    ...(redactor ? { placeholderOf: (v: string) => redactor.placeholderOf(v) } : {}),
  };
  // Built once now, so a missing secret stops the replay before any server is touched; each run gets a fresh copy of it.
  const built = new Correlation(plan, opts);
  return { path, plan, correlation: () => built.fresh() };
}

/** Where and how one run of a prepared replay goes. */
export type ReplayRunOptions = Pick<ReplayOptions, 'pace' | 'ws' | 'headers' | 'waitMs' | 'timeoutMs' | 'onProgress' | 'signal'> & {
  /** The recording proxy's URL. */
  proxyUrl: string;
  /** The Host requests carry: the target's (default the proxy's own, as a client of it would send). */
  host?: string;
  /** The target's URL behind the proxy: HTTP/2 requests' :scheme, and asked whether it speaks HTTP/2 when the capture has HTTP/2 entries (absent: assumed it does, over http). */
  target?: string;
  /** Whether the target speaks HTTP/2, when already known (an https target's ALPN choice in bb's probe): not asked again. */
  targetSpeaksHttp2?: boolean;
  /** Starts a step (a page) in the recording. */
  step(title: string): void;
};

/** What one run did. */
export type ReplayRunResult = DriveReplayResult & { rewritten: Rewritten[]; notes: string[] };

/** The replay's defaults, once: replayThrough and bb replay's flags (--pace, --ws, --wait-ms, --timeout) read them. */
export const REPLAY_DEFAULTS = Object.freeze({
  /** Order only, no gaps. */
  pace: 'asap' as const,
  /** WebSocket pacing: wait for the server's messages. */
  ws: 'wait' as const,
  /** Bound on each wait for the target, ms. */
  waitMs: 5_000,
  /** Bound on each exchange, ms. */
  timeoutMs: 30_000,
});

/** Replays a prepared capture through a recording proxy that is already running. */
export async function replayThrough(prepared: PreparedReplay, options: ReplayRunOptions): Promise<ReplayRunResult> {
  const pace = options.pace ?? REPLAY_DEFAULTS.pace;
  const correlation = prepared.correlation();
  const target = options.target ? new URL(options.target) : undefined;
  const h2Entries = prepared.plan.exchanges.filter((ex) => isHttp2(ex.entry)).length;
  const http2 = h2Entries === 0 || !target || (options.targetSpeaksHttp2 ?? (await speaksHttp2(target, 5_000)));
  const drove = await driveReplay(prepared.plan, {
    proxyUrl: options.proxyUrl,
    host: options.host ?? new URL(options.proxyUrl).host,
    ...(target?.protocol === 'https:' ? { scheme: 'https' as const } : {}),
    ...(http2 ? {} : { http2: false }),
    speed: pace === 'asap' ? 0 : pace === 'original' ? 1 : pace,
    ws: options.ws ?? REPLAY_DEFAULTS.ws,
    waitMs: options.waitMs ?? REPLAY_DEFAULTS.waitMs,
    timeoutMs: options.timeoutMs ?? REPLAY_DEFAULTS.timeoutMs,
    headers: options.headers ?? [],
    correlation,
    step: options.step,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { ...drove, rewritten: correlation.rewritten(), notes: http2 ? [] : [`the target does not speak HTTP/2: ${plural(h2Entries, 'exchange')} recorded over HTTP/2 went as HTTP/1.1`] };
}

/** Replays the capture at `path` against `options.target`; throws a BbError when it could not run. */
export async function replayCapture(path: string, options: ReplayOptions): Promise<ReplaySummary> {
  const target = parseOrigin(options.target, '--target');
  const prepared = await prepareReplay(path, options);
  // A target that is down, or whose certificate bb cannot verify, stops the replay before a capture exists.
  const probe = await probeUpstream(target.origin, options.upstreamTls ?? {}, 5_000);
  if (!probe.ok && probe.untrusted) throw new BbError('BB_REPLAY_TARGET_UNTRUSTED', `the target ${target.origin} has a certificate bb cannot verify (${probe.code}): ${UPSTREAM_VERIFY_HINT}. Nothing was sent.`);
  if (!probe.ok) throw new BbError('BB_REPLAY_TARGET_DOWN', `the target ${target.origin} does not accept connections (${probe.code}): start it, or check --target. Nothing was sent.`);
  const recording = await startRecording({
    target: target.origin,
    out: options.out,
    force: options.force,
    label: options.label ?? 'replay',
    listen: { host: '127.0.0.1', port: 0 },
    bbHome: options.bbHome,
    ...(options.upstreamTls ? { upstreamTls: options.upstreamTls } : {}),
    ...(options.redact !== undefined ? { redact: options.redact } : {}),
    ...(options.serverHome ? { serverHome: options.serverHome } : {}),
    // What was not sent and of which capture: bb diff of the two leaves those entries out, and says so.
    replayOf: prepared.plan.replayOf,
  });
  let run: ReplayRunResult;
  try {
    // Over TLS the probe's connection already asked for h2 by ALPN, with the proxy's trust.
    const targetSpeaksHttp2 = probe.alpn === undefined ? {} : { targetSpeaksHttp2: probe.alpn === 'h2' };
    run = await replayThrough(prepared, { ...options, ...targetSpeaksHttp2, proxyUrl: recording.url, host: target.host, target: target.origin, step: (title) => recording.step(title) });
  } finally {
    // Whatever happened, what crossed is written.
    await recording.close(2_000);
  }
  const total = prepared.plan.exchanges.length;
  const line = `replayed ${plural(run.replayed, 'exchange')} and ${plural(run.webSocketMessages, 'WebSocket message')} to ${target.origin}, ${plural(run.rewritten.length, 'value')} rewritten` +
    (run.cut.length ? `, ${run.cut.length} cut` : '') + ` → ${recording.out}` +
    (run.failed.length ? ` (${run.failed.length} of ${total} got no response)` : '');
  return {
    out: recording.out,
    target: target.origin,
    replayed: run.replayed,
    failed: run.failed,
    webSocketMessages: run.webSocketMessages,
    rewritten: run.rewritten,
    skipped: prepared.plan.skipped,
    timeouts: run.timeouts,
    cut: run.cut,
    exitCode: run.failed.length ? 1 : 0,
    line,
    notes: run.notes,
  };
}
