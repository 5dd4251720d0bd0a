// bb capture: one recording proxy per --target, until SIGINT/SIGTERM.
import { existsSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { BbError, isLoopbackHost } from '../../core/index.js';
import { parseListen, parseTarget, type ListenAddress, type TargetSpec } from '../listen.js';
import { checkAdminAddress, startAdmin, type AdminServer, type AdminTarget } from '../admin.js';
import { liveLog } from '../live-log.js';
import { listenerErrorText } from '../listener-errors.js';
import { useColor } from '../tty.js';
import { gracefulStop } from '../stop.js';
import { progressLine, writingText } from '../progress.js';
import { parseByteSize, parseRotate, redactOptionsFrom, withRedactOptions } from '../options.js';
import { forwardFlagsFrom, forwardPlanArgs, upstreamTlsFrom, withForwardOptions } from '../forward-options.js';
import { bindRecording, type BoundRecording, type Recording } from '../../scenario/index.js';
import { DEFAULT_BODY_CAP, DEFAULT_WS_BUDGET, MAX_RECORDED_CAP, journalPaths, liveJournalWriter, loadRedactKey, Redactor } from '../../capture/index.js';
import { PROXY_DEFAULTS } from '../../proxy/index.js';
import { captureFeeds, CAPTURE_VIEWS, checkUiAddress, startUi, type UiServer } from '../../ui/index.js';
import { loadConfigProtoSchema } from '../../diff/index.js';

/** "1 entry", "2 entries". */
function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The request target as the live log shows it: redacted as the HAR's URL will be (secret query values, a JWT in the path). */
function liveTarget(redactor: Redactor | undefined): ((target: string) => string) | undefined {
  if (!redactor) return undefined;
  return (target) => redactor.url(target);
}

/** One proxy to start: target, where it listens, where its HAR goes. */
export interface CapturePlan {
  label: string;
  target: TargetSpec;
  listen: ListenAddress;
  out: string;
}

/** Pairs targets with listens and outputs; throws a BbError saying what to fix. */
export function planCaptures(targets: string[], listens: string[], out: string | undefined, force: boolean): CapturePlan[] {
  if (targets.length === 0) throw new BbError('BB_NO_TARGET', 'bb capture needs --target http://127.0.0.1:PORT (the server to record)');
  const specs = targets.map(parseTarget);
  if (listens.length > specs.length) {
    throw new BbError('BB_BAD_LISTEN', `${listens.length} --listen values for ${specs.length} --target: give at most one --listen per --target, in the same order`);
  }
  const labels = specs.map((s, i) => s.label ?? (specs.length === 1 ? 'capture' : `target${i + 1}`));
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup) throw new BbError('BB_BAD_TARGET', `two targets are labelled '${dup}': labels name the capture files, so each must be unique`);
  if (out !== undefined && specs.length > 1 && /\.har$/i.test(out)) {
    throw new BbError('BB_BAD_OUT', `with ${specs.length} targets --out is a folder (one <label>.har each), got '${out}': give a folder like --out captures/`);
  }
  const asDir = out !== undefined && (specs.length > 1 || out.endsWith('/') || (existsSync(out) && statSync(out).isDirectory()));
  const plans = specs.map((target, i) => ({
    label: labels[i],
    target,
    listen: listens[i] !== undefined ? parseListen(listens[i]) : { host: '127.0.0.1', port: 0 },
    out: resolve(out === undefined ? join('captures', specs.length === 1 && !target.label ? 'capture.har' : `${labels[i]}.har`) : asDir ? join(out, `${labels[i]}.har`) : out),
  }));
  // Refuse before anything starts, so no capture is left half-made.
  for (const p of plans) {
    const journal = journalPaths(p.out).journal;
    const writer = liveJournalWriter(journal);
    if (writer !== undefined) throw new BbError('BB_JOURNAL_LIVE', `a capture that is still running (pid ${writer}) is writing ${journal}: give this capture another --out.`);
    if (existsSync(journal)) {
      throw new BbError('BB_JOURNAL_LEFTOVER', `a journal of an unfinished capture is left at ${journal}: run bb recover ${p.out} first (nothing is overwritten)`);
    }
    if (existsSync(p.out) && !force) {
      throw new BbError('BB_OUT_EXISTS', `${p.out} exists: pass --force to overwrite it, or --out another path`);
    }
  }
  return plans;
}

/** --listen-tls terminates TLS in front of https targets only: refused with one line before anything starts. */
export function checkListenTls(plans: CapturePlan[], forward: boolean): void {
  if (forward) throw new BbError('BB_USAGE', '--listen-tls is for reverse mode: forward mode intercepts TLS inside CONNECT tunnels already');
  const plain = plans.find((p) => !/^https:/i.test(p.target.url));
  if (plain) {
    throw new BbError('BB_USAGE', `--listen-tls needs an https:// target (bb terminates the client's TLS and speaks TLS to the target), got ${plain.target.url}: drop --listen-tls or give the https URL`);
  }
}

export const captureCommand: BbCommand = {
  command: 'capture',
  describe: 'record traffic through a transparent proxy in front of each --target, until Ctrl-C',
  builder: (y: Argv) =>
    withRedactOptions(withForwardOptions(y))
      .option('target', { type: 'string', array: true, describe: 'server to record: URL or label=URL (repeat for several)' })
      .option('listen', { type: 'string', array: true, describe: 'host:port per target, in order (default 127.0.0.1:0)' })
      .option('out', { type: 'string', describe: 'HAR file (one target) or folder (several); default captures/' })
      .option('force', { type: 'boolean', default: false, describe: 'overwrite existing capture files' })
      .option('quiet', { type: 'boolean', default: false, describe: 'no line per exchange' })
      .option('rotate', { type: 'string', describe: 'write the capture in finished segments while it runs (<name>-0001.har, …): a new one past a size (64MB) or an age (10m)' })
      .option('body-cap', { type: 'string', default: `${DEFAULT_BODY_CAP / 1048576}MiB`, describe: 'max recorded bytes per body (the rest streams through)' })
      .option('ws-budget', { type: 'string', default: `${DEFAULT_WS_BUDGET / 1048576}MiB`, describe: 'recorded message bytes per WebSocket connection and direction; later messages keep their size and a hash' })
      .option('admin', { type: 'string', describe: 'loopback host:port for the step endpoint (POST /step, GET /status)' })
      .option('ui', { type: 'string', describe: 'serve a live web view of the exchanges on loopback (default a free port; --ui 127.0.0.1:8090)' })
      .option('config', { type: 'string', describe: "with --ui: bb diff's config, whose normalize.proto names gRPC messages' fields in the view" })
      .option('listen-tls', { type: 'boolean', default: false, describe: "terminate clients' TLS with a leaf from bb's CA in front of an https --target (ALPN mirrored: h2 clients get h2)" })
      .option('xfwd', { type: 'boolean', default: false, describe: 'add X-Forwarded-For/-Proto/-Host' })
      .option('change-origin', { type: 'boolean', default: false, describe: 'send the target host as Host' })
      .option('connect-timeout', { type: 'number', default: PROXY_DEFAULTS.connectTimeoutMs, describe: 'ms to wait for an upstream connection' })
      .option('upstream-timeout', { type: 'number', default: PROXY_DEFAULTS.upstreamTimeoutMs, describe: 'ms of upstream silence before a 502 (0 = wait)' })
      .option('grace', { type: 'number', default: PROXY_DEFAULTS.closeGraceMs, describe: 'ms in-flight exchanges may take to finish at stop' })
      .option('server-home', { type: 'string', describe: "the server's HOME, for the <HOME> placeholder in diffs" }),
  run: async (argv, environment) => {
    const fwd = forwardFlagsFrom(argv);
    const upstreamTls = upstreamTlsFrom(argv, environment);
    let targets = (argv.target as string[] | undefined) ?? [];
    let listens = (argv.listen as string[] | undefined) ?? [];
    if (fwd.forward) ({ targets, listens } = forwardPlanArgs(targets, listens));
    const plans = planCaptures(targets, listens, argv.out as string | undefined, Boolean(argv.force));
    const listenTls = Boolean(argv['listen-tls']);
    if (listenTls) checkListenTls(plans, fwd.forward);
    const bodyCap = recordedCap(String(argv['body-cap']), '--body-cap');
    const wsBudget = recordedCap(String(argv['ws-budget']), '--ws-budget');
    const redact = redactOptionsFrom(argv);
    const admin = argv.admin !== undefined ? parseListen(String(argv.admin), '--admin') : undefined;
    // Refused before any port is bound (startAdmin checks too, for library callers).
    if (admin) checkAdminAddress(admin);
    // --ui alone (an empty value) means a free loopback port.
    const ui = argv.ui === undefined ? undefined : String(argv.ui) === '' ? { host: '127.0.0.1', port: 0 } : parseListen(String(argv.ui), '--ui');
    if (ui) checkUiAddress(ui.host);
    const rotate = argv.rotate !== undefined ? parseRotate(argv.rotate) : undefined;
    if (rotate && ui) throw new BbError('BB_ROTATE_LIVE', 'bb capture --ui follows one capture per target: leave out --rotate to watch it live, or --ui to rotate it');
    if (argv.config !== undefined && !ui) throw new BbError('BB_USAGE', 'bb capture reads --config for the live view only (gRPC field names): add --ui, or leave out --config');
    // Read before any port is bound: a bad config or .proto file stops the capture with one line.
    const proto = typeof argv.config === 'string' ? await loadConfigProtoSchema(argv.config) : undefined;
    const quiet = Boolean(argv.quiet);
    const color = useColor(process.stdout, environment.color);
    const bbHome = environment.home.path;
    const showTarget = liveTarget(redact === false ? undefined : new Redactor(loadRedactKey(bbHome), redact));
    let recordingErrors = 0;

    const handles: Recording[] = [];
    // A second signal leaves the journals: say which, and how to get each HAR back.
    const { stopped, release } = gracefulStop('finishing in-flight exchanges, writing captures', () => {
      if (!handles.length) return undefined;
      if (rotate) return 'the last segments not written; bb recover writes each from its journal (bb recover captures/capture-0004.har)';
      const outs = handles.map((h) => (relative(process.cwd(), h.out).startsWith('..') ? h.out : relative(process.cwd(), h.out)));
      return outs.length === 1 ? `the capture not written; bb recover ${outs[0]} writes it from its journal` : `the captures not written; ${outs.map((o) => `bb recover ${o}`).join(', ')} write them from their journals`;
    });

    let adminServer: AdminServer | undefined;
    let uiServer: UiServer | undefined;
    // A running count on a TTY: one status line on stderr, cleared before each log line.
    const statusLine = process.stderr.isTTY && !quiet;
    const clearStatus = (): void => {
      if (statusLine) process.stderr.write('\r\x1b[K');
    };
    const ticker = statusLine
      ? setInterval(() => {
          const totals = handles.map((h) => h.stats()).reduce((a, s) => ({ e: a.e + s.entries, w: a.w + s.webSocketMessages, f: a.f + s.inFlight }), { e: 0, w: 0, f: 0 });
          process.stderr.write(`\r\x1b[K[bb: ${totals.e} exchanges, ${totals.w} WebSocket messages, ${totals.f} in flight]`);
        }, 500)
      : undefined;
    ticker?.unref();
    const stopAll = async (): Promise<string[]> => {
      if (ticker) clearInterval(ticker);
      clearStatus();
      await adminServer?.close();
      await uiServer?.close();
      // Finalizing a long capture takes a while: entries written / recorded, on a TTY only.
      const progress = progressLine({ stream: process.stderr, quiet, afterMs: environment.progressAfterMs });
      const written = handles.map(() => 0);
      const recorded = handles.reduce((sum, h) => sum + h.stats().entries, 0);
      try {
        return await Promise.all(
          handles.map((h, i) =>
            h.close(Number(argv.grace), (p) => {
              written[i] = p.entries;
              const what = handles.length === 1 ? `writing ${basename(h.out)}` : `writing ${handles.length} captures`;
              progress.update(writingText(what, { ...p, entries: written.reduce((a, b) => a + b, 0) }, recorded));
            }),
          ),
        );
      } finally {
        progress.done();
      }
    };
    // Every port is bound before any file is made: a start that fails (a port
    // in use, forward mode refused) leaves no capture, journal or folder behind.
    const bound: BoundRecording[] = [];
    // --rotate: the last segment written, per label.
    const segmentsWritten = new Map<string, number>();
    const adminTargets: AdminTarget[] = [];
    try {
      for (const plan of plans) {
        bound.push(
          await bindRecording({
            target: plan.target.url,
            label: plan.label,
            out: plan.out,
            force: Boolean(argv.force),
            listen: plan.listen,
            redact,
            bodyCap,
            wsBudget,
            bbHome,
            serverHome: argv['server-home'] as string | undefined,
            xfwd: Boolean(argv.xfwd),
            changeOrigin: Boolean(argv['change-origin']),
            listenTls,
            connectTimeoutMs: Number(argv['connect-timeout']),
            upstreamTimeoutMs: Number(argv['upstream-timeout']),
            upstreamTls,
            ...(fwd.forward ? { mode: 'forward' as const, hosts: fwd.hosts, allowRemote: fwd.allowRemote } : {}),
            // Each finished segment is said as the final HAR is at the end.
            ...(rotate
              ? { segments: { rotate, onFinished: (index: number, out: string) => {
                  segmentsWritten.set(plan.label, index);
                  clearStatus();
                  process.stdout.write(`bb: ${plan.label}: wrote ${out} (segment ${index})\n`);
                } } }
              : {}),
            onListenerErrors: (report) => {
              // The capture's own listener never throws (it reports through onRecordingError): this is another observer, the live log.
              process.stderr.write(listenerErrorText(plan.label, report, 'the live log may miss lines'));
            },
            onRecordingError: (err) => {
              recordingErrors++;
              if (recordingErrors <= 5 || recordingErrors % 1000 === 0) {
                process.stderr.write(`bb: RECORDING FAILED for ${plan.label} (${recordingErrors} so far): ${err.message}; traffic keeps flowing\n`);
              }
            },
          }),
        );
      }
      if (admin) adminServer = await startAdmin(admin, adminTargets);
      for (const b of bound) handles.push(await b.record());
      if (ui) {
        const feeds = captureFeeds(handles.map((h) => ({ label: h.label, live: h.live(), ...(proto ? { proto } : {}) })));
        uiServer = await startUi({ listen: ui, title: `bb capture: ${handles.map((h) => h.label).join(', ')}`, views: CAPTURE_VIEWS, feeds });
      }
    } catch (err) {
      // Undo a failed start: captures begun are discarded, the rest only unbound.
      release();
      if (ticker) clearInterval(ticker);
      await adminServer?.close();
      await uiServer?.close();
      await Promise.all(handles.map((h) => h.discard()));
      await Promise.all(bound.slice(handles.length).map((b) => b.close()));
      throw err;
    }
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i];
      const handle = handles[i];
      adminTargets.push({ label: handle.label, url: handle.url, out: handle.out, step: handle.step, stats: handle.stats });
      // Warned once listening: a refused bind (forward mode without --allow-remote) stays one line.
      if (!isLoopbackHost(plan.listen.host)) {
        process.stderr.write(`bb: warning: ${plan.label} listens on ${plan.listen.host}, reachable from other machines\n`);
      }
      if (!quiet) {
        handle.proxy.bus.on(liveLog({ label: plans.length > 1 ? plan.label : undefined, color, showTarget, seqOf: handle.seqOf, forward: fwd.forward, write: (l) => {
            clearStatus();
            process.stdout.write(l + '\n');
          } }));
      }
      const trust = `clients trust ${join(bbHome, 'ca.pem')}: see bb ca trust-info`;
      const upstreamText = fwd.forward ? `forward proxy (${trust})` : listenTls ? `${plan.target.url} (TLS with bb's leaf, ALPN mirrored; ${trust})` : plan.target.url;
      process.stdout.write(`bb: ${plan.label}: ${handle.url} -> ${upstreamText}, recording to ${plan.out}\n`);
    }
    if (adminServer) process.stdout.write(`bb: admin: ${adminServer.url} (POST /step {"name": "..."}, GET /status)\n`);
    if (uiServer) process.stderr.write(`bb: ui: ${uiServer.url} (live view of the exchanges; open it in a browser on this machine)\n`);

    await stopped;
    const written = await stopAll();
    for (let i = 0; i < written.length; i++) {
      const s = handles[i].stats();
      const segments = rotate ? `${plural(segmentsWritten.get(handles[i].label) ?? 0, 'segment', 'segments')} of ${handles[i].out.replace(/\.har$/, '')}-*.har` : undefined;
      process.stdout.write(`bb: ${handles[i].label}: wrote ${segments ?? written[i]} (${plural(s.entries, 'entry', 'entries')}, ${plural(s.webSocketMessages, 'WebSocket message', 'WebSocket messages')})\n`);
      if (s.entries === 0) {
        process.stderr.write(`bb: ${handles[i].label}: nothing went through ${handles[i].url}: point your clients at that URL (bb diff refuses an empty capture)\n`);
      }
    }
    if (recordingErrors > 0) {
      process.stderr.write(`bb: ${recordingErrors} recording failures: the captures miss what failed to write\n`);
      return 1;
    }
    return 0;
  },
};

/** --body-cap and --ws-budget: a size up to MAX_RECORDED_CAP, or one line and exit 2. */
function recordedCap(value: string, flag: string): number {
  const n = parseByteSize(value, flag);
  if (n > MAX_RECORDED_CAP) {
    throw new BbError('BB_BAD_SIZE', `${flag} ${value} is past ${MAX_RECORDED_CAP / 1048576}MiB: a HAR entry holds what it records as JSON text, and readers parse an entry of at most 480 MB; give ${MAX_RECORDED_CAP / 1048576}MiB or less (what passes it is hashed, and compared by its hash).`);
  }
  return n;
}
