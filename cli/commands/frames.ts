// bb frames FILE [--conn ID | --url GLOB] [--type send|receive] [--opcode text,binary,ping,pong,close]
//                [--grep REGEX] [--page STEP] [--timeline] [--json] [--follow] [--html FILE [--time]] [--config FILE]
// The WebSocket connections, gRPC calls and SSE streams of any HAR and their messages in order; --follow tails a running capture;
// --config's normalize.proto files (bb diff's) name gRPC messages' fields.
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { BbCommand } from '../command.js';
import type { BbEnvironment } from '../environment.js';
import { stdoutStyle, printLines } from '../inspect-style.js';
import { followJournal, readCapture, redactorFor, journalPaths, type FollowedEvent } from '../../capture/index.js';
import { writeReport } from './diff.js';
import {
  wsConnections, filterConnections, timeline, framesText, timelineText, messageLine,
  connectionMatches, messageMatches, formatOffset, OPCODE_NAMES,
  framesDiagram, framesHtml, filterConnectionsByPage, filterTimelineByPage, laneLabels, laneLabelText,
  type FrameFilter,
} from '../../inspect/index.js';
import { BbError } from '../../core/index.js';
import { loadConfigProtoSchema } from '../../diff/index.js';
import type { ProtoSchema } from '../../capture/index.js';

/** --opcode: names or numbers, comma separated. */
function parseOpcodes(value: unknown): number[] | undefined {
  if (value === undefined) return undefined;
  const list = String(value).split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  return list.map((name) => {
    if (name in OPCODE_NAMES) return OPCODE_NAMES[name]!;
    if (/^-?\d+$/.test(name)) return Number(name);
    throw new BbError('BB_BAD_OPCODE', `--opcode takes text, binary, ping, pong, close, error or numbers, got '${name}'`);
  });
}

function parseGrep(value: unknown): RegExp | undefined {
  if (value === undefined) return undefined;
  try {
    return new RegExp(String(value));
  } catch (err) {
    throw new BbError('BB_BAD_GREP', `--grep needs a valid regular expression: ${(err as Error).message}`);
  }
}

function filterOf(argv: Record<string, unknown>): FrameFilter {
  const f: FrameFilter = {};
  if (argv['conn'] !== undefined) f.conn = String(argv['conn']);
  if (argv['url'] !== undefined) f.url = String(argv['url']);
  if (argv['type'] !== undefined) f.type = argv['type'] as 'send' | 'receive';
  const opcodes = parseOpcodes(argv['opcode']);
  if (opcodes) f.opcodes = opcodes;
  const grep = parseGrep(argv['grep']);
  if (grep) f.grep = grep;
  return f;
}


/** The filter flags as typed (`--grep X --type send`), for saying that nothing matched them. */
function givenFilters(argv: Record<string, unknown>, names: readonly string[]): string {
  return names.filter((n) => argv[n] !== undefined).map((n) => `--${n} ${String(argv[n])}`).join(' ');
}

const CONNECTION_FILTERS = ['conn', 'url'] as const;
const MESSAGE_FILTERS = ['type', 'opcode', 'grep'] as const;

async function printCapture(file: string, filter: FrameFilter, argv: Record<string, unknown>, environment: BbEnvironment, proto?: ProtoSchema): Promise<number> {
  const har = await readCapture(file, { allowIncomplete: true });
  const page = argv['page'] === undefined ? undefined : String(argv['page']);
  if (argv['html'] !== undefined) return writeHtml(har, file, filter, page, argv, proto);
  const style = { ...stdoutStyle(environment), ...(proto ? { proto } : {}) };
  const all = wsConnections(har);
  if (argv['timeline']) {
    const events = filterTimelineByPage(timeline(har, filter), har, page);
    if (argv['json']) process.stdout.write(JSON.stringify({ events }) + '\n');
    else printLines(timelineText(events, style));
    const given = givenFilters(argv, [...CONNECTION_FILTERS, ...MESSAGE_FILTERS]);
    if (given && !argv['json'] && !events.some((e) => e.kind === 'ws') && all.length > 0) {
      process.stderr.write(`bb: no messages match ${given}\n`);
    }
    return 0;
  }
  const conns = filterConnectionsByPage(filterConnections(all, filter), har, page);
  if (argv['json']) {
    const connections = conns.map(({ id, url, entry, messages, grpc, sse }) => ({ id, url, entry, ...(grpc ? { grpc } : {}), ...(sse ? { sse } : {}), messages }));
    process.stdout.write(JSON.stringify({ connections }) + '\n');
    return 0;
  }
  if (all.length === 0) {
    process.stderr.write(`bb: ${file} holds no WebSocket connections, gRPC calls or SSE streams.\n`);
    return 0;
  }
  const totals = new Map(all.map((c) => [c.id, c.messages.length]));
  printLines(framesText(conns, totals, style, laneLabels(conns, proto).map(laneLabelText)));
  if (conns.length === 0) {
    // Say which filter emptied the list: the connection filters, or the message filters within them.
    const byConnection = all.filter((c) => connectionMatches(c, filter));
    const given = byConnection.length === 0 ? givenFilters(argv, CONNECTION_FILTERS) : givenFilters(argv, MESSAGE_FILTERS);
    process.stderr.write(byConnection.length === 0 ? `bb: no WebSocket connection, gRPC call or SSE stream matches ${given}\n` : `bb: no messages match ${given}\n`);
  }
  return 0;
}

/** --html FILE: the sequence diagram page (inspect/frames-html.ts). */
async function writeHtml(har: Awaited<ReturnType<typeof readCapture>>, file: string, filter: FrameFilter, page: string | undefined, argv: Record<string, unknown>, proto?: ProtoSchema): Promise<number> {
  const diagram = framesDiagram(har, filter, { http: Boolean(argv['timeline']), ...(page !== undefined ? { page } : {}), ...(proto ? { proto } : {}) });
  const given = ['conn', 'url', 'type', 'opcode', 'grep', 'page']
    .filter((k) => argv[k] !== undefined).map((k) => `--${k} ${String(argv[k])}`).join(' ');
  const html = framesHtml(diagram, { title: `bb frames ${basename(file)}`, byTime: Boolean(argv['time']), filters: given });
  await writeReport(String(argv['html']), html, '--html', Boolean(argv['force']));
  if (diagram.rows.length === 0) process.stderr.write(`bb: nothing to draw: ${diagram.totalConnections ? 'no messages match' : `${file} holds no WebSocket connections`}.\n`);
  return 0;
}

async function follow(file: string, filter: FrameFilter, argv: Record<string, unknown>, environment: BbEnvironment, proto?: ProtoSchema): Promise<number> {
  const paths = journalPaths(file);
  if (!existsSync(paths.journal)) {
    if (existsSync(paths.out)) return printCapture(paths.out, filter, argv, environment, proto);
    throw new BbError('BB_NO_CAPTURE', `no running capture at ${paths.out}: neither ${paths.journal} nor ${paths.out} exists; check the path given to bb capture --out.`);
  }
  const style = { ...stdoutStyle(environment), ...(proto ? { proto } : {}) };
  const json = Boolean(argv['json']);
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let since: number | undefined;
  const onEvent = (ev: FollowedEvent): void => {
    if (ev.kind === 'ws') {
      if (!connectionMatches({ id: ev.connection, url: ev.url }, filter) || !messageMatches(ev.message, filter)) return;
      if (json) {
        process.stdout.write(JSON.stringify({ kind: 'ws', connection: ev.connection, exchange: ev.exchange, url: ev.url, message: ev.message }) + '\n');
      } else {
        process.stdout.write(messageLine(ev.message, ev.openedAt, style, ev.connection, ev.url) + '\n');
      }
      return;
    }
    if (filter.url !== undefined && !connectionMatches({ id: '', url: ev.url }, { url: filter.url })) return;
    if (json) process.stdout.write(JSON.stringify(ev) + '\n');
    else {
      since ??= ev.time;
      const seq = String(ev.seq).padStart(6);
      const what = ev.kind === 'request' ? `▶ http ${ev.method} ${ev.url}` : `◀ http ${ev.status} ${ev.method} ${ev.url}`;
      process.stdout.write(`${seq} #${String(ev.exchange).padEnd(5)} ${formatOffset(ev.time, since).padStart(11)} ${what}\n`);
    }
  };
  try {
    await followJournal({
      journalPath: paths.journal,
      bodiesPath: paths.bodies,
      onEvent,
      http: Boolean(argv['timeline']),
      signal: controller.signal,
      redactorFor: (header) => redactorFor(header, environment.home.fromEnv ? environment.home.path : undefined),
    });
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
  return 0;
}

export const framesCommand: BbCommand = {
  command: 'frames <file>',
  describe: 'list the WebSocket connections, gRPC calls and SSE streams of a capture (any HAR) and their messages in order',
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', describe: 'a HAR file (bb, Chrome, Playwright, mitmproxy, ...); with --follow, a running capture' })
      .option('conn', { type: 'string', describe: "only this connection: its id (c3), or '#N' of its upgrade exchange" })
      .option('url', { type: 'string', describe: 'only connections whose URL matches this glob (* and ?)' })
      .option('type', { choices: ['send', 'receive'], describe: 'only messages sent by the client (send) or the server (receive)' })
      .option('opcode', { type: 'string', describe: 'only these opcodes: text,binary,ping,pong,close,error (or numbers)' })
      .option('grep', { type: 'string', describe: 'only messages whose payload matches this regular expression' })
      .option('page', { type: 'string', describe: 'only messages (and, with --timeline, entries) of this step: a page title or id' })
      .option('timeline', { type: 'boolean', default: false, describe: 'interleave every connection and the HTTP entries in total order' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document (with --follow: one object per line)' })
      .option('follow', { type: 'boolean', default: false, describe: "tail a running capture's journal (<out>.journal) as messages arrive" })
      .option('html', { type: 'string', nargs: 1, describe: 'write the frame order as a sequence diagram, one self-contained page, to FILE ("-" = stdout)' })
      .option('time', { type: 'boolean', default: false, describe: 'with --html: space rows by time instead of one row per message' })
      .option('force', { type: 'boolean', default: false, describe: 'with --html: overwrite FILE if it exists' })
      .option('config', { type: 'string', describe: "bb diff's config: its normalize.proto files name gRPC messages' fields" })
      .conflicts('conn', 'url'),
  run: async (argv, environment) => {
    const file = String(argv['file']);
    const filter = filterOf(argv);
    if (argv['html'] !== undefined && (argv['json'] || argv['follow'])) {
      throw new BbError('BB_FRAMES_HTML_CONFLICT', `--html draws a finished capture as a page: drop ${argv['json'] ? '--json' : '--follow'}, or run it separately.`);
    }
    const proto = typeof argv['config'] === 'string' ? await loadConfigProtoSchema(argv['config']) : undefined;
    return argv['follow'] ? follow(file, filter, argv, environment, proto) : printCapture(file, filter, argv, environment, proto);
  },
};
