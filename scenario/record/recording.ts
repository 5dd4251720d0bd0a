// The one place a proxy and a capture are wired together: a recording proxy
// in front of one server. `bb capture`, `bb compare` (compare/run.ts),
// `bb replay` (replay/run.ts) and the package's startCapture all record
// through here.
import { join, resolve } from 'node:path';
import { createLeafFactory, loadOrCreateCa, startForwardProxy, startProxy, PROXY_DEFAULTS, type Fact, type ListenerErrorReport, type RunningProxy, type UpstreamTlsOptions } from '../../proxy/index.js';
import { DEFAULT_BODY_CAP, journalPaths, openCapture, openSegmentedCapture, segmentPath, type Capture, type SegmentedCaptureOptions, type HarShadow, type HarReplayOf, type ShadowRole, type LiveCapture, type LiveLimits, type RedactConfig, type WriteProgress } from '../../capture/index.js';

/** Options of one recording proxy (the CLI's flags, as data). */
export interface RecordingOptions {
  /** The server to record, e.g. "http://127.0.0.1:3000" (reverse mode; ignored in forward mode). */
  target?: string;
  /** 'forward': bb is an HTTP(S) proxy for its clients, intercepting TLS with bb's CA (default 'reverse'). */
  mode?: 'reverse' | 'forward';
  /** Forward mode: host globs to intercept; others are tunnelled and recorded as tunnels (default all). */
  hosts?: string[];
  /** Forward mode: permit a non-loopback listen address. */
  allowRemote?: boolean;
  /** Names the capture (log._bb.label); default "capture". */
  label?: string;
  /** Where the HAR goes; default captures/<label>.har under the working directory. */
  out?: string;
  /** Overwrite an existing `out`. */
  force?: boolean;
  /** Listen address; default 127.0.0.1 on any free port. */
  listen?: { host?: string; port?: number };
  /** Redaction rules; false keeps every value (--no-redact). Default: on, with the lists in docs/capture.md "What the proxy guarantees". */
  redact?: RedactConfig | false;
  /** Max recorded bytes per body; default 16 MiB (the rest streams through unrecorded). */
  bodyCap?: number;
  /** Recorded message bytes per WebSocket connection and direction; default 128 MiB (later messages keep their size and a hash). */
  wsBudget?: number;
  /** A body's pieces written each at its own time before its bytes are gathered; default PIECES_TIMED (tests lower it). */
  piecesTimed?: number;
  /** bb's home (redaction key, CA); the package's startRecording defaults it to BB_HOME or ~/.bb. */
  bbHome: string;
  /** The server's HOME, recorded for the <HOME> placeholder. */
  serverHome?: string;
  /** bb shadow: request headers it sets on this target's copies (capture's setHeaders). */
  setHeaders?: string[];
  /** bb shadow: which of its captures this is (log._bb.shadowRole). */
  shadowRole?: ShadowRole;
  /** bb replay: the capture replayed and the entries it did not send (log._bb.replayOf). */
  replayOf?: HarReplayOf;
  /** Add X-Forwarded-* headers. */
  xfwd?: boolean;
  /** Rewrite Host to the target's. */
  changeOrigin?: boolean;
  /** Reverse mode in front of an https target: bb terminates the clients' TLS with a leaf from its CA, ALPN mirrored (--listen-tls); the URL is https://. */
  listenTls?: boolean;
  /** Upstream connect timeout, ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Max silence from the upstream during an exchange, ms (default none). */
  upstreamTimeoutMs?: number;
  /** TLS to an https target. */
  upstreamTls?: UpstreamTlsOptions;
  /** Called when recording fails (disk full...); traffic keeps flowing. */
  onRecordingError?: (err: Error) => void;
  /** Called once at close when a listener of the proxy's facts threw (traffic went on; the bus kept the errors). */
  onListenerErrors?: (report: ListenerErrorReport) => void;
  /** Write the capture as finished segments (`<out stem>-0001.har`, …: capture/segments.ts) instead of one HAR at close. */
  segments?: Omit<SegmentedCaptureOptions, 'out' | 'label' | 'target' | 'listen' | 'bbHome'>;
}

/** A running recording proxy. */
export interface Recording {
  /** The proxy's URL: point clients here. */
  url: string;
  /** The capture's label. */
  label: string;
  /** The HAR path written at close (rotating: the name the segments' names are made from). */
  out: string;
  /** Starts a new step (a HAR page): following entries and WS messages carry it. */
  step(name: string): void;
  /** Counts so far. */
  stats(): ReturnType<Capture['stats']>;
  /** The `_bb.seq` of an exchange under way, by the proxy's exchange id (what the live log shows as #<seq>). */
  seqOf(exchangeId: number): number | undefined;
  /** `bb shadow`: writes `_bb.shadow` on an exchange under way, by the proxy's exchange id; false when it has ended. */
  tag(exchangeId: number, shadow: HarShadow): boolean;
  /** The capture's journal and bodies files (a live follower reads them: capture's followEntries). */
  journal: { journal: string; bodies: string };
  /** The capture followed live (what a live view shows): rows, entries and messages as they are recorded; `keep` as Capture.live. */
  live(limits?: LiveLimits): LiveCapture;
  /** Stops the proxy and removes the capture files without writing a HAR (a start that failed). */
  discard(): Promise<void>;
  /** Stops the proxy (in-flight exchanges finish, up to graceMs), writes the HAR, resolves to its path. */
  close(graceMs?: number, onProgress?: (progress: WriteProgress) => void): Promise<string>;
  /** The proxy itself (facts bus, server). */
  proxy: RunningProxy;
}

/**
 * A proxy that listens but has created no file yet. Binding every port (each
 * proxy, the admin endpoint) before any capture file exists means a start
 * that fails leaves nothing behind. Facts that arrive before `record()` are
 * kept and recorded then.
 */
export interface BoundRecording {
  /** The proxy's URL. */
  url: string;
  /** The capture's label. */
  label: string;
  /** The HAR path `record()` will write at close. */
  out: string;
  /** The proxy itself. */
  proxy: RunningProxy;
  /** Opens the capture files (journal, bodies) and starts recording. */
  record(): Promise<Recording>;
  /** Stops the proxy without recording anything. */
  close(): Promise<void>;
}

/** Starts the proxy of a capture (binds its port) without creating any file. */
export async function bindRecording(options: RecordingOptions): Promise<BoundRecording> {
  const label = options.label ?? 'capture';
  const out = resolve(options.out ?? join('captures', `${label}.har`));
  const common = {
    listen: options.listen,
    xfwd: options.xfwd,
    connectTimeoutMs: options.connectTimeoutMs,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
    upstreamTls: options.upstreamTls,
    // The tap holds no more of a WebSocket message than the capture records of it.
    wsKeep: options.bodyCap ?? DEFAULT_BODY_CAP,
  };
  const proxy =
    options.mode === 'forward'
      ? await startForwardProxy({ ...common, ca: await loadOrCreateCa(options.bbHome), hosts: options.hosts, allowRemote: options.allowRemote })
      : await startProxy({
          ...common,
          target: options.target,
          changeOrigin: options.changeOrigin,
          ...(options.listenTls ? { listenTls: { leaves: createLeafFactory(await loadOrCreateCa(options.bbHome)) } } : {}),
        });
  const early: Fact[] = [];
  const stopBuffering = proxy.bus.on((fact) => early.push(fact));
  const record = async (): Promise<Recording> => {
    const captureOptions = {
      out,
      label,
      target: proxy.target,
      listen: proxy.url,
      bbHome: options.bbHome,
      force: options.force,
      redact: options.redact,
      bodyCap: options.bodyCap,
      ...(options.wsBudget !== undefined ? { wsBudget: options.wsBudget } : {}),
      ...(options.piecesTimed !== undefined ? { piecesTimed: options.piecesTimed } : {}),
      serverHome: options.serverHome,
      ...(options.setHeaders?.length ? { setHeaders: options.setHeaders } : {}),
      ...(options.shadowRole ? { shadowRole: options.shadowRole } : {}),
      ...(options.replayOf ? { replayOf: options.replayOf } : {}),
      onError: options.onRecordingError,
    };
    const segments = options.segments ? openSegmentedCapture({ ...options.segments, ...captureOptions }) : undefined;
    const capture: Capture = segments ?? (await openCapture(captureOptions));
    stopBuffering();
    for (const fact of early.splice(0)) capture.listener(fact);
    proxy.bus.on(capture.listener);
    let closing: Promise<string> | undefined;
    return {
      url: proxy.url,
      label,
      out,
      proxy,
      step: (name) => capture.step(name),
      stats: () => capture.stats(),
      seqOf: (exchangeId) => capture.seqOf(exchangeId),
      tag: (exchangeId, shadow) => capture.tag(exchangeId, shadow),
      journal: journalPaths(segments ? segmentPath(out, 1) : out),
      live: (limits) => capture.live(limits),
      discard: async () => {
        await proxy.close(0);
        capture.discard();
      },
      close(graceMs = PROXY_DEFAULTS.closeGraceMs, onProgress) {
        closing ??= proxy.close(graceMs).then(() => {
          // Reported once the proxy is quiet, so the report counts every fact it delivered.
          const report = proxy.bus.errorReport();
          if (report) options.onListenerErrors?.(report);
          return capture.close(onProgress);
        });
        return closing;
      },
    };
  };
  return {
    url: proxy.url,
    label,
    out,
    proxy,
    record,
    close: async () => {
      stopBuffering();
      early.length = 0;
      await proxy.close(0);
    },
  };
}

/** Starts a recording proxy in front of `options.target`. */
export async function startRecording(options: RecordingOptions): Promise<Recording> {
  const bound = await bindRecording(options);
  try {
    return await bound.record();
  } catch (err) {
    await bound.close();
    throw err;
  }
}
