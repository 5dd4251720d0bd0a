// bb show FILE [--method M] [--status 4xx] [--url GLOB] [--page NAME] [--ws] [--json]
// bb show FILE --entry '#N' [--body [--config FILE] | --json]   (--config: bb diff's, its .proto files name gRPC fields)
// One line per entry of any HAR: #<seq>, time, method, status, sizes, duration, page, WS messages, URL;
// or one exchange whole.
import type { BbCommand } from '../command.js';
import type { BbEnvironment } from '../environment.js';
import { stdoutStyle, printLines } from '../inspect-style.js';
import { readCapture } from '../../capture/index.js';
import { entryRows, exchangeText, filterRows, findExchange, isExchangeName, showText, type EntryFilter } from '../../inspect/index.js';
import type { Har } from '../../capture/index.js';
import { BbError } from '../../core/index.js';
import { loadConfigProtoSchema } from '../../diff/index.js';

const list = (value: unknown): string[] =>
  String(value).split(',').map((s) => s.trim()).filter(Boolean);

function filterOf(argv: Record<string, unknown>): EntryFilter {
  const f: EntryFilter = {};
  if (argv['method'] !== undefined) f.methods = list(argv['method']).map((m) => m.toUpperCase());
  if (argv['status'] !== undefined) {
    f.statuses = list(argv['status']);
    const bad = f.statuses.find((s) => !/^(?:[0-9]{3}|[1-5][xX]{2})$/.test(s));
    if (bad !== undefined) throw new BbError('BB_BAD_STATUS', `--status takes codes or classes like 404, 4xx or 2xx,3xx, got '${bad}'`);
  }
  if (argv['url'] !== undefined) f.url = String(argv['url']);
  if (argv['page'] !== undefined) f.page = String(argv['page']);
  if (argv['ws']) f.ws = true;
  return f;
}

const FILTERS = ['method', 'status', 'url', 'page', 'ws'] as const;

/** `bb show FILE --entry '#N'`: one exchange whole (--json: its HAR entry as written). */
async function showOne(har: Har, file: string, wanted: string, argv: Record<string, unknown>, environment: BbEnvironment): Promise<number> {
  const found = findExchange(har, wanted);
  if (!found) {
    throw new BbError('BB_NO_ENTRY', `${file} has no exchange ${wanted.startsWith('#') ? wanted : `#${wanted}`}: bb show ${file} lists them`);
  }
  if (argv['json']) {
    process.stdout.write(JSON.stringify(found.entry) + '\n');
    return 0;
  }
  const proto = typeof argv['config'] === 'string' ? await loadConfigProtoSchema(argv['config']) : undefined;
  printLines(exchangeText(found.entry, found.index, { ...stdoutStyle(environment), ...(proto ? { proto } : {}) }, { body: Boolean(argv['body']) }));
  return 0;
}

export const showCommand: BbCommand = {
  command: 'show <file>',
  describe: "list the entries of a capture (any HAR): one line each, filters, --json; --entry '#N' --body shows one whole",
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', describe: 'a HAR file (bb, Chrome, Playwright, mitmproxy, ...)' })
      .option('method', { type: 'string', describe: 'only these methods (comma separated)' })
      .option('status', { type: 'string', describe: 'only these statuses: 404, 4xx, 2xx,3xx' })
      .option('url', { type: 'string', describe: 'only URLs matching this glob (* and ?)' })
      .option('page', { type: 'string', describe: 'only entries of this page (step) title or id' })
      .option('ws', { type: 'boolean', default: false, describe: 'only WebSocket connections' })
      .option('entry', { type: 'string', describe: "one exchange whole, by its number: '#4' (request, response, headers)" })
      .option('body', { type: 'boolean', default: false, describe: 'with --entry: also the bodies (decoded, JSON pretty-printed), SSE events, WebSocket messages' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document: { entries: [...] }; with --entry, the HAR entry' })
      .option('config', { type: 'string', describe: "with --entry --body: bb diff's config, whose normalize.proto names gRPC messages' fields" }),
  run: async (argv, environment) => {
    const file = String(argv['file']);
    const filter = filterOf(argv);
    const wanted = argv['entry'] !== undefined ? String(argv['entry']) : undefined;
    if (wanted !== undefined && !isExchangeName(wanted)) {
      throw new BbError('BB_BAD_ENTRY', `--entry takes an exchange as bb show lists it, like '#4', got '${wanted}'`);
    }
    if (argv['body'] && wanted === undefined) throw new BbError('BB_USAGE', "--body goes with --entry: bb show CAPTURE --entry '#4' --body");
    if (argv['config'] !== undefined && !argv['body']) throw new BbError('BB_USAGE', "--config names gRPC fields in the messages --body lists: bb show CAPTURE --entry '#4' --body --config bb.config.json");
    const har = await readCapture(file, { allowIncomplete: true });
    if (wanted !== undefined) return showOne(har, file, wanted, argv, environment);
    const all = entryRows(har);
    const rows = filterRows(all, filter, har);
    if (argv['json']) {
      process.stdout.write(JSON.stringify({ entries: rows }) + '\n');
      return 0;
    }
    const since = Math.min(...all.map((r) => r.time).filter(Number.isFinite), Infinity);
    printLines(showText(rows, Number.isFinite(since) ? since : 0, stdoutStyle(environment)));
    if (rows.length === 0) {
      const given = FILTERS.filter((n) => argv[n] !== undefined && argv[n] !== false).map((n) => (argv[n] === true ? `--${n}` : `--${n} ${String(argv[n])}`));
      process.stderr.write(all.length === 0 ? `bb: ${file} holds no entries\n` : `bb: no entries match ${given.join(' ')}\n`);
    }
    return 0;
  },
};
