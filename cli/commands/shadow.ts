// bb shadow: live traffic answered by the primary, mirrored to the candidate
// (and a secondary), compared as it flows (docs/shadow.md). Runs until
// --until or SIGINT/SIGTERM; exit 1 when the regression rate passes
// --fail-on, 0 otherwise, 2 when it could not run. `--merge` adds up the
// JSON reports of several shadows instead.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { BbError, isLoopbackHost, oneLine, unreadableWhy, visibleText } from '../../core/index.js';
import { elidePair, VALUE_WIDTH } from '../../diff/index.js';
import { checkUiAddress } from '../../ui/index.js';
import { parseListen } from '../listen.js';
import { gracefulStop } from '../stop.js';
import { listenerErrorText } from '../listener-errors.js';
import { durationMs, flagValues, parseHeaderFlag, parseRotate, redactOptionsFrom, withRedactOptions } from '../options.js';
import { upstreamTlsFrom, withUpstreamTlsOptions } from '../forward-options.js';
import { mergeReports, quantile, reportShapeError, startShadow, type MirrorPolicy, type RouteCounts, type ShadowReport } from '../../scenario/index.js';
import { runFolderName } from './compare.js';
import { checkReport, writeReport } from './diff.js';

/** --sample: a share (0.1) or a percentage (10%). */
export function parseShare(value: unknown, flag: string, code: 'BB_BAD_SAMPLE' | 'BB_BAD_FAIL_ON'): number {
  const text = String(value).trim();
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text);
  const n = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!(n >= 0 && n <= 1)) throw new BbError(code, `${flag} needs a share between 0 and 1 or a percentage (0.1, 10%), got '${text}'`);
  return n;
}

/** --until: a request count (10000) or a duration (30s, 10m, 1h). */
export function parseUntil(value: unknown): { requests: number } | { ms: number } {
  const text = String(value).trim();
  if (/^\d+$/.test(text) && Number(text) > 0) return { requests: Number(text) };
  const ms = durationMs(text);
  if (ms !== undefined && ms > 0) return { ms };
  throw new BbError('BB_BAD_UNTIL', `--until needs a number of requests (10000) or a duration (30s, 10m, 1h), got '${text}'`);
}

/** --header candidate:'Name: value' (or secondary:…). */
function parseTargetHeaders(values: unknown): Partial<Record<'candidate' | 'secondary', Array<[string, string]>>> {
  const out: Partial<Record<'candidate' | 'secondary', Array<[string, string]>>> = {};
  for (const text of flagValues(values)) {
    const m = /^(candidate|secondary):(.*)$/s.exec(text);
    if (!m) throw new BbError('BB_BAD_HEADER', `--header needs TARGET:'Name: value' with TARGET candidate or secondary, like --header 'candidate:Authorization: Bearer …', got '${text}'`);
    (out[m[1] as 'candidate' | 'secondary'] ??= []).push(parseHeaderFlag(m[2]!, `--header '${m[1]}:Authorization: Bearer …'`));
  }
  return out;
}

function parseMirror(values: unknown): MirrorPolicy {
  const list = flagValues(values);
  if (list.length === 0 || (list.length === 1 && list[0] === 'safe')) return 'safe';
  if (list.length === 1 && list[0] === 'all') return 'all';
  for (const r of list) if (!/^[A-Z]+ \//.test(r)) throw new BbError('BB_BAD_MIRROR', `--mirror needs safe, all, or routes like 'POST /search' or 'PUT /items/*', got '${r}'`);
  return list;
}

function parseSampleBy(value: unknown): { kind: 'header' | 'cookie'; name: string } | undefined {
  if (value === undefined) return undefined;
  const m = /^(header|cookie):(.+)$/.exec(String(value));
  if (!m) throw new BbError('BB_BAD_SAMPLE', `--sample-by needs header:NAME or cookie:NAME (all of one user's requests in or out), got '${String(value)}'`);
  return { kind: m[1] as 'header' | 'cookie', name: m[2]! };
}

/** Routes the terminal lists, the busiest (the JSON report has every route the run counted apart). */
export const ROUTE_LINES = 20;

/**
 * One line per route, the ROUTE_LINES busiest in name order, then all routes together: what the terminal shows live
 * and at the end (a route's controls and bidi characters written as \u202E: visibleText).
 */
export function routeLines(report: ShadowReport): string[] {
  let routes = Object.entries(report.routes);
  const more = routes.length - ROUTE_LINES;
  if (more > 0) {
    const busiest = new Set([...routes].sort(([, a], [, b]) => b.requests - a.requests).slice(0, ROUTE_LINES).map(([r]) => r));
    routes = routes.filter(([r]) => busiest.has(r));
  }
  const rows = routes.map(([route, c]) => routeLine(route, c, report.latency[route]));
  if (more > 0) rows.push(`  … and ${more} more route${more === 1 ? '' : 's'} (--json FILE lists each)`);
  return [...rows, routeLine('all routes', report.totals, undefined)].map(visibleText);
}

function routeLine(route: string, c: RouteCounts, latency: ShadowReport['latency'][string] | undefined): string {
  const skipped = Object.entries(c.skipped).map(([why, n]) => `${n} ${why}`).join(', ');
  const lat = latency
    ? ' · p50/p99 ' + (['primary', 'candidate', 'secondary'] as const)
        .filter((t) => latency[t])
        .map((t) => `${t} ${quantile(latency[t], 0.5)}/${quantile(latency[t], 0.99)} ms`)
        .join(', ')
    : '';
  const classes = [`${c.equal} equal`, `${c.regressions} regressions`, `${c.noise} noise`, ...(c.unclassified ? [`${c.unclassified} unclassified`] : []), `${c.errors} errors`];
  return `  ${route}: ${c.requests} request${c.requests === 1 ? '' : 's'}, ${c.mirrored} mirrored (${classes.join(', ')})${skipped ? `, skipped: ${skipped}` : ''}${lat}`;
}

/** The findings, one line each with a sample (what came from the traffic with its controls and bidi characters written as \u202E). */
export function findingLines(report: ShadowReport): string[] {
  return report.findings.slice(0, 20).map((f) => {
    const s = f.samples[0];
    // Elided around the change as bb diff's lines are (a changed 200 KB body was one 400,000-character line).
    const values = s ? ` (${elidePair(s.primary ?? null, s.candidate ?? null, VALUE_WIDTH, f.pattern).join(' → ')})` : '';
    const following = f.consequences ? `; with it: ${f.consequences.map((c) => `${c.pattern} ${c.kind}`).join(', ')}` : '';
    return visibleText(`  ${f.class} ${f.pattern || '(whole exchange)'} ${f.kind} in ${f.count} exchange${f.count === 1 ? '' : 's'}${values}, e.g. ${s?.request ?? f.routes[0]} #${s?.id ?? '?'}${following}`);
  });
}

function readReport(path: string): ShadowReport {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new BbError('BB_BAD_SHADOW_REPORT', `${path} cannot be read (${unreadableWhy(err)}): give the --json files of bb shadow runs`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new BbError('BB_BAD_SHADOW_REPORT', `${path} cannot be read as JSON (${oneLine((err as Error).message)}): give the --json files of bb shadow runs`);
  }
  const wrong = reportShapeError(doc);
  if (wrong) throw new BbError('BB_BAD_SHADOW_REPORT', `${path} is not a bb shadow report (format 1; ${oneLine(wrong).slice(0, 200)}): give the --json files of bb shadow runs`);
  return doc as ShadowReport;
}

export const shadowCommand: BbCommand = {
  command: 'shadow',
  describe: 'answer live traffic with --primary, mirror it to --candidate (and --secondary), compare the answers as they flow',
  builder: (y: Argv) =>
    withUpstreamTlsOptions(withRedactOptions(y, ' in the captures'), 'targets')
      .option('primary', { type: 'string', describe: 'the build in production: it answers the clients' })
      .option('candidate', { type: 'string', describe: 'the build under test: gets a copy of each mirrored request' })
      .option('secondary', { type: 'string', describe: "a second instance of the primary's build: what differs there too is noise" })
      .option('listen', { type: 'string', nargs: 1, describe: 'host:port clients connect to (default 127.0.0.1, a free port)' })
      .option('listen-tls', { type: 'boolean', default: false, describe: "clients speak TLS to bb shadow, with a leaf from bb's CA, in front of an https --primary (ALPN mirrored: h2 clients get h2)" })
      .option('out', { type: 'string', nargs: 1, describe: 'folder for primary.har, candidate.har, secondary.har (default captures/shadow-<time>/)' })
      .option('force', { type: 'boolean', default: false, describe: 'overwrite captures in --out' })
      .option('rotate', { type: 'string', nargs: 1, describe: "write the captures in finished segments while the run goes (primary-0001.har, …): a new one once the primary's passes a size (64MB) or an age (10m)" })
      .option('config', { type: 'string', nargs: 1, describe: "the diff's config (rules, keys, known), as bb diff --config" })
      .option('mirror', { type: 'string', array: true, describe: "safe (GET, HEAD, OPTIONS, gRPC calls sent as PUT or GET; default) | all | routes to add, like 'POST /search' or 'POST /pkg.Svc/Method' for a gRPC method (needs isolated data)" })
      .option('sample', { type: 'string', nargs: 1, describe: 'share of exchanges mirrored: 0.1 or 10% (default all)' })
      .option('sample-by', { type: 'string', nargs: 1, describe: "header:NAME or cookie:NAME: a user's requests are all in or all out" })
      .option('header', { type: 'string', array: true, describe: "TARGET:'Name: value' sets a header on mirrored requests to candidate or secondary" })
      .option('until', { type: 'string', nargs: 1, describe: 'end after N requests or a duration (30s, 10m, 1h); default Ctrl-C' })
      .option('fail-on', { type: 'string', default: '0', nargs: 1, describe: 'exit 1 when (regressions + exchanges the candidate failed) / (compared + those) passes this share (default: any)' })
      .option('json', { type: 'string', nargs: 1, describe: 'write the report (findings, counts, latency) as JSON here (- for stdout)' })
      .option('merge', { type: 'string', array: true, describe: 'add up the --json reports of several shadows into one verdict (no traffic)' })
      .option('timeout', { type: 'number', default: 30_000, nargs: 1, describe: 'ms a mirrored request may take' })
      .option('compare', { type: 'string', nargs: 1, describe: "live (default): compare exchanges as they flow | end: compare once the run ends, so no comparison takes a core from the relay while traffic flows (a small machine's p99)" })
      .option('quiet', { type: 'boolean', default: false, describe: 'no live lines' })
      .option('ui', { type: 'string', describe: 'serve a live web view of the run on loopback: route table, findings side by side, ratify into --config (default a free port; --ui 127.0.0.1:8090)' }),
  run: async (argv, environment) => {
    const failOn = parseShare(argv['fail-on'], '--fail-on', 'BB_BAD_FAIL_ON');
    const json = argv.json as string | undefined;
    const force = Boolean(argv.force);
    // Said now, not once the run (30 minutes of traffic, say) is over and its report has nowhere to go.
    checkReport(json, '--json', force);
    if (argv.merge !== undefined) {
      const files = (argv.merge as string[]).map(String);
      if (files.length === 0) throw new BbError('BB_USAGE', 'bb shadow --merge needs the --json reports of the runs: bb shadow --merge a.json b.json');
      const report = mergeReports(files.map(readReport));
      return finish(report, failOn, json, force, `merged ${files.length} reports`);
    }
    for (const flag of ['primary', 'candidate'] as const) {
      if (argv[flag] === undefined) throw new BbError('BB_USAGE', `bb shadow needs --${flag} URL (e.g. --primary http://127.0.0.1:3000 --candidate http://127.0.0.1:3001)`);
    }
    const mirror = parseMirror(argv.mirror);
    const sample = argv.sample !== undefined ? parseShare(argv.sample, '--sample', 'BB_BAD_SAMPLE') : undefined;
    const sampleBy = parseSampleBy(argv['sample-by']);
    // Without a share every user is in: the flag would do nothing, silently.
    if (sampleBy && sample === undefined) throw new BbError('BB_BAD_SAMPLE', `--sample-by picks which users a --sample share keeps: give the share too, like --sample 10% --sample-by ${sampleBy.kind}:${sampleBy.name}`);
    const timeoutMs = Number(argv.timeout);
    // 0 (or less) made every mirror an error, the verdict still OK.
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new BbError('BB_USAGE', `--timeout needs the ms a mirrored request may take, more than 0 (default 30000), got '${String(argv.timeout)}'`);
    const headers = parseTargetHeaders(argv.header);
    const until = argv.until !== undefined ? parseUntil(argv.until) : undefined;
    const listen = argv.listen !== undefined ? parseListen(String(argv.listen)) : undefined;
    const upstreamTls = upstreamTlsFrom(argv, environment);
    const listenTls = Boolean(argv['listen-tls']);
    const outDir = String(argv.out ?? join('captures', runFolderName('shadow')));
    const quiet = Boolean(argv.quiet);
    const rotate = argv.rotate !== undefined ? parseRotate(argv.rotate) : undefined;
    const compare = parseCompare(argv.compare);
    // --ui alone (an empty value) means a free loopback port.
    const ui = argv.ui === undefined ? undefined : String(argv.ui) === '' ? { host: '127.0.0.1', port: 0 } : parseListen(String(argv.ui), '--ui');
    if (ui) checkUiAddress(ui.host);

    let outs: string[] = [];
    // A second signal leaves the journals: say which, and how to get each HAR back.
    const { stopped, stop: resolveStop, release } = gracefulStop('letting mirrors finish, comparing what is left, writing captures', () =>
      rotate ? 'the last segments not written; bb recover writes each from its journal' : outs.length ? `the captures not written; ${outs.map((o) => `bb recover ${o}`).join(', ')} write them from their journals` : undefined,
    );
    try {
      let lastLines = 0;
      const live = process.stderr.isTTY && !quiet;
      const shadow = await startShadow({
        primary: String(argv.primary),
        candidate: String(argv.candidate),
        ...(argv.secondary !== undefined ? { secondary: String(argv.secondary) } : {}),
        ...(listen ? { listen } : {}),
        ...(listenTls ? { listenTls } : {}),
        upstreamTls,
        outDir,
        force,
        ...(argv.config !== undefined ? { configPath: String(argv.config) } : {}),
        mirror,
        ...(sample !== undefined ? { sample } : {}),
        ...(sampleBy ? { sampleBy } : {}),
        headers,
        timeoutMs,
        bbHome: environment.home.path,
        redact: redactOptionsFrom(argv),
        ...(ui ? { ui } : {}),
        ...(compare ? { compare } : {}),
        ...(until && 'requests' in until ? { untilRequests: until.requests } : {}),
        ...(rotate
          ? {
              rotate,
              // Each segment once all its captures are written: a line of its own, above the live table.
              onSegment: (index: number, files: Partial<Record<string, string>>) => {
                process.stderr.write(`${live && lastLines ? `\x1b[${lastLines}A\x1b[J` : ''}segment ${index}: ${Object.values(files).map((p) => relative(process.cwd(), p!)).join(', ')}\n`);
                lastLines = 0;
              },
            }
          : {}),
        // At close, per target: the tee (the primary's) or a mirror (its target's) threw; the run went on without that step.
        onListenerErrors: (report, target) => {
          process.stderr.write(listenerErrorText(target, report, 'the mirrored copies and the live comparison may miss exchanges'));
          lastLines = 0;
        },
        onReport: (report) => {
          if (live) {
            const lines = routeLines(report);
            process.stderr.write(`${lastLines ? `\x1b[${lastLines}A` : ''}${lines.map((l) => `\x1b[K${l}`).join('\n')}\n`);
            lastLines = lines.length;
          }
        },
      });
      outs = [shadow.out.primary, shadow.out.candidate, shadow.out.secondary].filter((p): p is string => p !== undefined).map((p) => relative(process.cwd(), p));
      // As bb capture: a listener other machines reach (a fleet's proxy mirrors to it) is said once.
      if (listen && !isLoopbackHost(listen.host)) process.stderr.write(`bb: warning: bb shadow listens on ${listen.host}, reachable from other machines\n`);
      const dir = relative(process.cwd(), outDir) || '.';
      process.stdout.write(`bb shadow: clients → ${shadow.url} (answered by ${String(argv.primary)}); mirrored to ${String(argv.candidate)}${argv.secondary ? ` and ${String(argv.secondary)}` : ''}; captures in ${dir}/\n`);
      if (listenTls) process.stderr.write(`bb: clients speak TLS to bb shadow with bb's leaf, ALPN mirrored; clients trust ${join(environment.home.path, 'ca.pem')}: see bb ca trust-info\n`);
      if (compare === 'end') {
        process.stderr.write('bb: --compare end: exchanges are compared once the run ends (no live table until then)\n');
        // On a terminal, what there is to say meanwhile: the requests answered so far.
        if (live) {
          const timer = setInterval(() => process.stderr.write(`\r\x1b[K${shadow.requests()} requests answered; compared when the run ends`), 500);
          void stopped.then(() => (clearInterval(timer), process.stderr.write('\r\x1b[K')));
        }
      }
      if (shadow.uiUrl) process.stderr.write(`bb: ui: ${shadow.uiUrl} (live view of the run; open it in a browser on this machine)\n`);
      if (until && 'ms' in until) setTimeout(resolveStop, until.ms).unref();
      if (until && 'requests' in until) {
        const timer = setInterval(() => {
          if (shadow.requests() >= until.requests) resolveStop();
        }, 100);
        timer.unref();
        void stopped.then(() => clearInterval(timer));
      }
      await stopped;
      const report = await shadow.close();
      if (shadow.drainedBy() === 'whole' && compare !== 'end') process.stderr.write('the comparison worker got too little CPU at the end (other processes keep the cores busy): a fresh worker compared the journals whole\n');
      const n = shadow.segments?.();
      if (n !== undefined) process.stderr.write(`captures: ${n} segment${n === 1 ? '' : 's'} each of ${outs.map((p) => p.replace(/\.har$/, '-*.har')).join(', ')}\n`);
      else process.stderr.write(`captures: ${outs.join(', ')}\n`);
      return finish(report, failOn, json, force, `${report.totals.requests} request${report.totals.requests === 1 ? '' : 's'}`);
    } finally {
      release();
    }
  },
};

/** --compare: when exchanges are compared; undefined for the default (live). */
function parseCompare(value: unknown): 'live' | 'end' | undefined {
  if (value === undefined) return undefined;
  const v = String(value);
  if (v === 'live' || v === 'end') return v;
  throw new BbError('BB_USAGE', `--compare takes live or end, got '${v}': live compares as the traffic flows, end once the run ends`);
}

async function finish(report: ShadowReport, failOn: number, json: string | undefined, force: boolean, what: string): Promise<number> {
  const t = report.totals;
  const candidateErrors = t.candidateErrors ?? 0;
  // The rate is above --fail-on (never negative) only when something failed: rateOf's numerator.
  const failed = report.regressionRate > failOn;
  const lines = [
    `${failed ? 'REGRESSIONS' : 'OK'}: ${what}, ${t.mirrored} mirrored, ${t.regressions} with regressions${t.unclassified ? `, ${t.unclassified} unclassified` : ''}${candidateErrors ? `, ${candidateErrors} the candidate failed` : ''} (rate ${(report.regressionRate * 100).toFixed(2)}%, fail-on ${(failOn * 100).toFixed(2)}%), ${t.noise} noise, ${t.errors} errors`,
    ...routeLines(report),
    ...(report.findings.length ? ['findings:', ...findingLines(report)] : []),
  ];
  const out = json === '-' ? process.stderr : process.stdout;
  out.write(lines.join('\n') + '\n');
  if (json !== undefined) await writeReport(json, JSON.stringify(report, null, 2) + '\n', '--json', force);
  return failed ? 1 : 0;
}
