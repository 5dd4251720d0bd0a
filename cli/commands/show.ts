// bb show FILE [--method M] [--status 4xx] [--url GLOB] [--page NAME] [--ws] [--json]
// One line per entry of any HAR: seq, time, method, status, sizes, duration, page, WS messages, URL.
import type { BbCommand } from '../command.js';
import { UsageError } from '../errors.js';
import { stdoutStyle, printLines } from '../inspect-style.js';
import { readCapture } from '../../capture/reader.js';
import { entryRows, filterRows, showText, type EntryFilter } from '../../inspect/index.js';

const list = (value: unknown): string[] =>
  String(value).split(',').map((s) => s.trim()).filter(Boolean);

function filterOf(argv: Record<string, unknown>): EntryFilter {
  const f: EntryFilter = {};
  if (argv['method'] !== undefined) f.methods = list(argv['method']).map((m) => m.toUpperCase());
  if (argv['status'] !== undefined) {
    f.statuses = list(argv['status']);
    const bad = f.statuses.find((s) => !/^(?:[0-9]{3}|[1-5][xX]{2})$/.test(s));
    if (bad !== undefined) throw new UsageError(`--status takes codes or classes like 404, 4xx or 2xx,3xx, got '${bad}'`, 'BB_BAD_STATUS');
  }
  if (argv['url'] !== undefined) f.url = String(argv['url']);
  if (argv['page'] !== undefined) f.page = String(argv['page']);
  if (argv['ws']) f.ws = true;
  return f;
}

export const showCommand: BbCommand = {
  command: 'show <file>',
  describe: 'list the entries of a capture (any HAR): one line each, filters, --json',
  builder: (yargs) =>
    yargs
      .positional('file', { type: 'string', describe: 'a HAR file (bb, Chrome, Playwright, mitmproxy, ...)' })
      .option('method', { type: 'string', describe: 'only these methods (comma separated)' })
      .option('status', { type: 'string', describe: 'only these statuses: 404, 4xx, 2xx,3xx' })
      .option('url', { type: 'string', describe: 'only URLs matching this glob (* and ?)' })
      .option('page', { type: 'string', describe: 'only entries of this page (step) title or id' })
      .option('ws', { type: 'boolean', default: false, describe: 'only WebSocket connections' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document: { entries: [...] }' }),
  run: async (argv) => {
    const file = String(argv['file']);
    const filter = filterOf(argv);
    const har = await readCapture(file, { allowIncomplete: true });
    const all = entryRows(har);
    const rows = filterRows(all, filter, har);
    if (argv['json']) {
      process.stdout.write(JSON.stringify({ entries: rows }) + '\n');
      return 0;
    }
    const since = Math.min(...all.map((r) => r.time).filter(Number.isFinite), Infinity);
    printLines(showText(rows, Number.isFinite(since) ? since : 0, stdoutStyle()));
    if (rows.length === 0) process.stderr.write(`bb: no entry of ${file} matches.\n`);
    return 0;
  },
};
