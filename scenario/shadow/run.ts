// A `bb shadow` run (docs/shadow.md): the client's traffic goes through a
// recording tap to the primary, untouched, exactly as `bb capture`; the tee
// (tee.ts) copies each mirrored request to the candidate and the secondary,
// each behind its own recording proxy (mirror.ts), when the primary's
// response head arrives; a worker follows the three captures and compares
// them as they flow (compare-worker.ts). Every exchange gets a shared id
// (`_bb.shadow.id`, the primary's seq) in all three captures, so
// `bb diff primary.har candidate.har --noise secondary.har` pairs as the
// live comparison did.
import { join, resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { BbError, parseOrigin, startModuleWorker } from '../../core/index.js';
import { loadDiffConfig } from '../../diff/index.js';
import { probeUpstream, PROXY_DEFAULTS, UPSTREAM_VERIFY_HINT, type ListenerErrorReport, type UpstreamTlsOptions } from '../../proxy/index.js';
import type { RedactConfig, RotateSpec } from '../../capture/index.js';
import { bindRecording, type BoundRecording, type Recording } from '../record/index.js';
import { MirrorTarget } from './mirror.js';
import { Tee, type TeeOptions } from './tee.js';
import { AfterTurn } from './after-turn.js';
import { StreamCounterparts } from './batch-binding.js';
import type { ShadowReport, TargetName } from './live.js';
import type { CompareWorkerSpec, FromWorker, ToWorker } from './compare-worker.js';
import { watchStarved } from './drain-watch.js';
import { threadMemory, type ThreadMemory } from './thread-memory.js';
import { startShadowUi } from './shadow-ui.js';
import { ShadowRotation, type SegmentFiles } from './rotation.js';
import type { UiServer } from '../../ui/index.js';

/**
 * The comparison worker's young generation, MiB. V8's default lets it grow to
 * 48 MiB of mostly garbage (each batch's parsed HARs and normalized copies):
 * capped, the long run's RSS is ~35 MiB lower (docs/performance.md "shadow")
 * and the worker still keeps up.
 */
const COMPARE_YOUNG_GENERATION_MB = 8;

/** Options of a shadow run (the CLI's flags, as data); which requests are mirrored and the caps are the tee's (tee.ts). */
export interface ShadowOptions extends TeeOptions {
  /** The build in production: it answers the client. */
  primary: string;
  /** The build under test: gets a copy of each mirrored request. */
  candidate: string;
  /** A second copy of the primary's build: what differs between it and the primary is noise. */
  secondary?: string;
  /** Where clients connect (default 127.0.0.1, a free port). */
  listen?: { host?: string; port?: number };
  /** Clients speak TLS to bb shadow: a leaf from bb's CA, ALPN mirrored from the primary (h2 clients get h2); needs an https primary (`--listen-tls`). */
  listenTls?: boolean;
  /** TLS to https targets: CAs to trust on top of Node's, or no verification (`--upstream-ca`, `--insecure-upstream`). */
  upstreamTls?: UpstreamTlsOptions;
  /** Folder of primary.har, candidate.har, secondary.har (rotating: primary-0001.har, candidate-0001.har, … a segment each). */
  outDir: string;
  /** Write the captures as finished segments while the run goes: a new one once the primary's passes this many bytes or this age (`--rotate 64MB|10m`). */
  rotate?: RotateSpec;
  /** Rotating: told each segment once all its captures are written (its paths per target). */
  onSegment?: (index: number, files: SegmentFiles) => void;
  /** Overwrite existing captures there. */
  force?: boolean;
  /** The diff's config file (rules, keys, known), as `bb diff --config`. */
  configPath?: string;
  /** Extra headers per mirror target (--header candidate:'Name: value'). */
  headers?: Partial<Record<'candidate' | 'secondary', Array<[string, string]>>>;
  /** A mirrored request not answered in this long is cut (default 30 s). */
  timeoutMs?: number;
  /** bb's home (redaction key). */
  bbHome: string;
  /** Redaction, as bb capture's (default on). */
  redact?: RedactConfig | false;
  /** Recorded bytes per body (default 16 MiB). */
  bodyCap?: number;
  /**
   * Take this many requests, then no more (`--until N`): the primary's proxy stops taking new requests at the N-th
   * (RunningProxy.stopTaking); the run goes on until they are compared and `close()`. Before, the count was
   * read from the comparison's reports, and a keep-alive client's requests kept coming meanwhile (`--until 100`
   * ended at ~1,500).
   */
  untilRequests?: number;
  /** Called with the report every `reportEveryMs` (default 500). */
  onReport?: (report: ShadowReport) => void;
  reportEveryMs?: number;
  /** Called at close, once per target whose recording proxy's fact listeners threw (the tee on the primary's, a mirror on its own; traffic went on), as bb capture's recordings are. */
  onListenerErrors?: (report: ListenerErrorReport, target: TargetName) => void;
  /** Serve the live view (`--ui`) on this loopback address: the Shadow tab and the three captures' exchanges. */
  ui?: { host?: string; port?: number };
  /**
   * How the end of the run compares what is left (drain-watch.ts): 'auto'
   * (default) lets the live worker finish, and when it is starved of CPU
   * races it with a fresh worker that compares the journals whole at the
   * process's priority; 'whole' stops the live worker at once and takes the
   * fresh worker's report (what the tests and bench/shadow-drain.ts check
   * that path with); 'live' always waits for the live worker. Captures that
   * rotate always take the live worker's.
   */
  drain?: 'auto' | 'live' | 'whole';
  /**
   * When the exchanges are compared (`--compare`): 'live' (default) as they
   * flow, in a worker beside the relay; 'end' not while the traffic flows
   * (no comparison takes a core from the relay: on a machine with as few
   * cores as the processes of a request, the primary's p99 pays for every
   * core the comparison takes, docs/performance.md "shadow"), then at close
   * a worker compares the journals whole, with the same engine and verdicts.
   * Until then `report()` is undefined and `requests()` counts the requests
   * the primary answered. Not with `ui` (a live view) or `rotate` (segments
   * are compared as they are written).
   */
  compare?: 'live' | 'end';
}

/** A running shadow. */
export interface Shadow {
  /** Where clients connect (the primary's tap). */
  url: string;
  /** The captures being written (rotating: the names the segments are named after, primary.har → primary-0001.har). */
  out: Record<TargetName, string | undefined>;
  /** Rotating: segments whose captures are all written so far (all of them once close resolved). */
  segments?(): number;
  /** The report as of the last comparison. */
  report(): ShadowReport | undefined;
  /**
   * Requests so far, as `--until N` counts them: those compared (so their
   * mirrors have answered and a WebSocket's mirrored conversations ended),
   * or, once the comparison has failed, those the primary answered, so the
   * run still ends.
   */
  requests(): number;
  /** Memory of the proxies' thread and, as of its last report, of the comparison worker (the benchmark's per-thread figures). */
  memory(): { main: ThreadMemory; compare?: ThreadMemory };
  /** Once closed: which worker's report is the final one, the live worker's or a whole comparison's (`drain`). */
  drainedBy(): 'live' | 'whole' | undefined;
  /** The live view's URL (with `ui`). */
  uiUrl?: string;
  /** Ends the run: stops taking traffic, lets mirrors finish, compares what is left, writes the captures; resolves to the final report. */
  close(graceMs?: number): Promise<ShadowReport>;
}

/** Starts a shadow run; throws a BbError (exit 2) when a target is down or a file is in the way. */
export async function startShadow(options: ShadowOptions): Promise<Shadow> {
  const outDir = resolve(options.outDir);
  const common = { bbHome: options.bbHome, force: options.force, redact: options.redact, bodyCap: options.bodyCap, ...(options.upstreamTls ? { upstreamTls: options.upstreamTls } : {}) };
  if (options.rotate && options.ui) throw new BbError('BB_ROTATE_LIVE', 'bb shadow --ui shows one capture per target: leave out --rotate to watch the run live, or --ui to rotate its captures');
  const atEnd = options.compare === 'end';
  if (atEnd && options.ui) throw new BbError('BB_USAGE', 'bb shadow --compare end shows findings only when the run ends: leave out --ui, or --compare end to watch them live');
  if (atEnd && options.rotate) throw new BbError('BB_USAGE', 'bb shadow --rotate compares each segment as it is written: leave out --compare end, or --rotate to compare the whole run at its end');
  const setHeaders = headerNamesSet(options.headers);
  const sides: TargetName[] = ['primary', 'candidate', ...(options.secondary !== undefined ? (['secondary'] as const) : [])];
  const rotation = options.rotate ? new ShadowRotation(options.rotate, sides, options.onSegment) : undefined;
  // Each target's recording options: its segments when rotating; it reports its bus's listener errors when it closes (scenario/record/recording.ts).
  const ofSide = (side: TargetName) => ({
    shadowRole: side,
    ...(rotation ? { segments: rotation.options(side) } : {}),
    // What --header sets on a target's copies is bb's choice: its capture names the headers, and no comparison compares them.
    ...(side !== 'primary' && setHeaders[side]?.length ? { setHeaders: setHeaders[side] } : {}),
    ...(options.onListenerErrors ? { onListenerErrors: (report: ListenerErrorReport) => options.onListenerErrors!(report, side) } : {}),
  });
  // A bad config is refused before any port is bound (the comparison worker, a thread of its own, reads it again, and again when it changes).
  const config = options.configPath && (options.ui === undefined || existsSync(options.configPath)) ? await loadDiffConfig(options.configPath) : undefined;
  if (options.listenTls && !options.primary.startsWith('https://')) {
    throw new BbError('BB_USAGE', `--listen-tls needs an https:// --primary (bb shadow terminates the client's TLS and speaks TLS to the primary), got ${options.primary}: drop --listen-tls or give the https URL`);
  }
  const targetUrls = [['primary', options.primary], ['candidate', options.candidate], ['secondary', options.secondary]] as const;
  // Each URL's form before any is probed: a path on the last is refused as fast as one on the first.
  for (const [name, url] of targetUrls) if (url !== undefined) parseOrigin(url, `--${name}`);
  for (const [name, url] of targetUrls) if (url !== undefined) await checkReachable(name, url, options.upstreamTls ?? {});
  const bound: BoundRecording[] = [];
  let recs: Partial<Record<TargetName, Recording>> = {};
  try {
    const primaryBound = await bindRecording({ ...common, target: options.primary, label: 'primary', out: join(outDir, 'primary.har'), ...ofSide('primary'), ...(options.listen ? { listen: options.listen } : {}), ...(options.listenTls ? { listenTls: true } : {}) });
    bound.push(primaryBound);
    const candidateBound = await bindRecording({ ...common, target: options.candidate, label: 'candidate', out: join(outDir, 'candidate.har'), ...ofSide('candidate') });
    bound.push(candidateBound);
    const secondaryBound = options.secondary ? await bindRecording({ ...common, target: options.secondary, label: 'secondary', out: join(outDir, 'secondary.har'), ...ofSide('secondary') }) : undefined;
    if (secondaryBound) bound.push(secondaryBound);
    recs = { primary: await primaryBound.record(), candidate: await candidateBound.record(), ...(secondaryBound ? { secondary: await secondaryBound.record() } : {}) };
  } catch (err) {
    for (const r of Object.values(recs)) await r.discard().catch(() => {});
    for (const b of bound) await b.close().catch(() => {});
    throw err;
  }
  const primary = recs.primary!;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const afterTurn = new AfterTurn();
  const later = (job: () => void): void => afterTurn.later(job);
  const mirrors: MirrorTarget[] = [
    new MirrorTarget('candidate', recs.candidate!, new URL(options.candidate).host, new URL(primary.url).host, options.headers?.candidate ?? [], timeoutMs, later),
    ...(recs.secondary ? [new MirrorTarget('secondary', recs.secondary, new URL(options.secondary!).host, new URL(primary.url).host, options.headers?.secondary ?? [], timeoutMs, later)] : []),
  ];
  rotation?.mirrorTargets(mirrors);
  const tee = new Tee(primary, mirrors, options, later);
  primary.proxy.bus.on((fact) => (tee.fact(fact), afterTurn.fact(fact)));
  if (options.untilRequests !== undefined) {
    let started = 0;
    const limit = options.untilRequests;
    primary.proxy.bus.on((fact) => {
      if (fact.type === 'exchange-started' && ++started === limit) primary.proxy.stopTaking();
    });
  }

  const targets = { primary: options.primary, candidate: options.candidate, ...(options.secondary ? { secondary: options.secondary } : {}) };
  const reportEveryMs = options.reportEveryMs ?? 500;
  const spec: CompareWorkerSpec = {
    journals: Object.fromEntries(Object.entries(recs).map(([k, r]) => [k, r.journal])),
    targets,
    setHeaders,
    ...(options.configPath ? { configPath: options.configPath, configMayBeAbsent: options.ui !== undefined } : {}),
    bbHome: options.bbHome,
    everyMs: reportEveryMs,
    startedDateTime: new Date().toISOString(),
    // Half the report's period: each exchange is in the next report all the same, and every poll wakes the worker
    // (at 50 ms, the polls were a fifth of its CPU: docs/performance.md "shadow").
    pollMs: Math.max(10, Math.round(reportEveryMs / 2)),
  };
  // Compared at the end: no live worker; close() starts the one that reads the journals whole.
  const worker: Worker | undefined = atEnd ? undefined : startModuleWorker(import.meta.url, 'compare-worker', spec, { maxYoungGenerationSizeMb: COMPARE_YOUNG_GENERATION_MB });
  let last: ShadowReport | undefined;
  let compareMemory: ThreadMemory | undefined;
  let workerError: Error | undefined;
  let onFinal: ((r: ShadowReport) => void) | undefined;
  // The first final report ends the run; a second (the race at the end) is not read.
  let drainedBy: 'live' | 'whole' | undefined;
  let liveTid: number | undefined;
  const reportListeners = new Set<(r: ShadowReport) => void>();
  rotation?.worker((msg) => worker?.postMessage(msg));
  // What the targets' stream messages taught the relay, for the comparison (a read of a value an open stream issued).
  const streamTaught = new StreamCounterparts((msg) => worker?.postMessage(msg satisfies ToWorker));
  for (const m of mirrors) m.onStreamLearned = (pairs) => streamTaught.add(m.name === 'secondary' ? 'secondary' : 'candidate', pairs);
  // A worker's report: the live view's and onReport's; a final one ends the run (the first of the race at the end).
  const takeReport = (msg: Extract<FromWorker, { type: 'report' }>, by: 'live' | 'whole'): void => {
    last = msg.report;
    compareMemory = msg.memory;
    options.onReport?.(msg.report);
    for (const l of reportListeners) l(msg.report);
    if (msg.final) {
      drainedBy = by;
      onFinal?.(msg.report);
    }
  };
  // The comparison failed: the run ends with the report it had, and close() throws this.
  const failRun = (what: string, message: string): void => {
    workerError = new BbError('BB_SHADOW_COMPARE', `${what} failed: ${message}`);
    onFinal?.(last ?? emptyReport(targets));
  };
  worker?.on('message', (msg: FromWorker) => {
    if (drainedBy) return;
    if (msg.type === 'thread') liveTid = msg.tid;
    else if (msg.type === 'unfollowed') rotation?.unfollowed(msg.key);
    else if (msg.type === 'report') takeReport(msg, 'live');
    else {
      rotation?.workerGone();
      failRun('the live comparison', msg.message);
    }
  });
  worker?.on('error', (err) => {
    if (drainedBy) return;
    rotation?.workerGone();
    failRun('the live comparison', err.message);
  });
  // The end of a run whose live worker is starved (drain-watch.ts): a fresh worker at the process's priority
  // compares the journals whole; its report is the final one if it comes first. Its failure leaves the live
  // worker's report, or, when the live worker was stopped for it ('whole'), fails the run.
  let whole: Worker | undefined;
  const compareWhole = (): void => {
    if (whole || rotation || drainedBy || workerError) return;
    const failed = (message: string): void => {
      if (!drainedBy && (options.drain === 'whole' || atEnd)) failRun('the comparison at the end of the run', message);
    };
    try {
      whole = startModuleWorker(import.meta.url, 'compare-worker', { ...spec, whole: true, counterparts: streamTaught.all() } satisfies CompareWorkerSpec, { maxYoungGenerationSizeMb: COMPARE_YOUNG_GENERATION_MB });
    } catch (err) {
      failed((err as Error).message);
      return;
    }
    whole.on('message', (msg: FromWorker) => {
      if (drainedBy) return;
      if (msg.type === 'report' && msg.final) takeReport(msg, 'whole');
      else if (msg.type === 'error') failed(msg.message);
    });
    whole.on('error', (err) => failed(err.message));
  };

  let ui: UiServer | undefined;
  if (options.ui) {
    try {
      ui = await startShadowUi(options.ui, {
        recordings: recs,
        report: () => last,
        onReport: (l) => (reportListeners.add(l), () => reportListeners.delete(l)),
        ...(options.configPath ? { configPath: options.configPath } : {}),
        ...(config ? { config } : {}),
        configChanged: () => worker?.postMessage({ type: 'config' } satisfies ToWorker),
      });
    } catch (err) {
      await worker?.terminate();
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
    requests: () => (workerError || atEnd ? primary.stats().entries : (last?.totals.requests ?? 0)),
    ...(rotation ? { segments: () => rotation.segments } : {}),
    memory: () => ({ main: threadMemory(), ...(compareMemory ? { compare: compareMemory } : {}) }),
    drainedBy: () => drainedBy,
    close(graceMs = PROXY_DEFAULTS.closeGraceMs) {
      closing ??= (async () => {
        await ui?.close();
        await primary.proxy.close(graceMs);
        await Promise.all(mirrors.map((m) => m.settle(Math.max(graceMs, 1000))));
        await Promise.all(mirrors.map((m) => m.recording.proxy.close(graceMs)));
        // The journals' last writes go out on the next turn.
        await new Promise((r) => setImmediate(r));
        const final = new Promise<ShadowReport>((res) => (onFinal = res));
        let stopWatch = (): void => {};
        if (!worker) {
          compareWhole();
        } else if (!workerError && options.drain === 'whole' && !rotation) {
          await worker.terminate();
          compareWhole();
        } else if (!workerError) {
          worker.postMessage({ type: 'drain' });
          if (options.drain !== 'live' && liveTid !== undefined && !rotation) stopWatch = watchStarved(liveTid, compareWhole);
        }
        const report = workerError ? (last ?? emptyReport(targets)) : await final;
        stopWatch();
        await whole?.terminate();
        // The worker has read every journal: the last segments are written without waiting for it.
        rotation?.workerGone();
        await worker?.terminate();
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
  const counts = { requests: 0, mirrored: 0, equal: 0, regressions: 0, noise: 0, unclassified: 0, errors: 0, candidateErrors: 0, skipped: {} };
  return { format: 1, targets, startedDateTime: at, endedDateTime: at, totals: counts, routes: {}, latency: {}, findings: [], regressionRate: 0 };
}

/** Any target down at start, or an https one whose certificate bb cannot verify: one line, exit 2. */
async function checkReachable(name: string, url: string, upstreamTls: UpstreamTlsOptions): Promise<void> {
  const probe = await probeUpstream(url, upstreamTls, 3000);
  if (!probe.ok && probe.untrusted) throw new BbError('BB_TARGET_UNTRUSTED', `the ${name} ${url} has a certificate bb cannot verify (${probe.code}): ${UPSTREAM_VERIFY_HINT}`);
  if (!probe.ok) throw new BbError('BB_TARGET_DOWN', `the ${name} ${url} does not accept connections: start it (or fix the URL), then run bb shadow again`);
}

/** The request header names `--header` sets on each mirror target's copies, lower case. */
export function headerNamesSet(headers: ShadowOptions['headers']): Partial<Record<'candidate' | 'secondary', string[]>> {
  const names = (list: Array<[string, string]> | undefined) => [...new Set((list ?? []).map(([n]) => n.toLowerCase()))];
  return { candidate: names(headers?.candidate), secondary: names(headers?.secondary) };
}
