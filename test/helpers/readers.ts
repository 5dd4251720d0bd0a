// Every reader of capture files, in process and through the CLI, with the
// one verdict the bad-input and fuzz tests accept: exit 0 or 1, or a clean
// exit 2 with one line. Anything else (an exception without an exit code, a
// stack trace, several lines) is a crash.
import { diffCaptures } from '../../diff/index.js';
import { readCapture } from '../../capture/reader.js';
import { entryRows, filterRows, framesText, showText, timeline, timelineText, wsConnections, type Style } from '../../inspect/index.js';
import type { BbRun } from './cli.js';
import { capture } from './har.js';
import type { Har } from '../../capture/har.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';

/** How one reader ended. */
export interface Outcome {
  /** 0/1 as the command would exit, 2 for a user error, -1 for a crash. */
  code: number;
  /** The user error's message, or the crash's stack. */
  message?: string;
}

const plain: Style = { color: false, width: 120 };

async function outcome(run: () => Promise<number>): Promise<Outcome> {
  try {
    return { code: await run() };
  } catch (err) {
    const e = err as Error;
    if (isBbError(e)) return { code: exitStatusFor(e), message: e.message };
    return { code: -1, message: e?.stack ?? String(err) };
  }
}

/** What `bb diff`, `bb frames` and `bb show` do with a file, in process (no child processes: fast). */
export async function readersInProcess(path: string, other: string): Promise<Record<'diff' | 'frames' | 'show', Outcome>> {
  const diff = await outcome(async () => (await diffCaptures(other, path)).exitCode);
  const frames = await outcome(async () => {
    const har = await readCapture(path, { allowIncomplete: true });
    const conns = wsConnections(har);
    framesText(conns, new Map(conns.map((c) => [c.id, c.messages.length])), plain);
    timelineText(timeline(har, {}), plain);
    JSON.stringify({ connections: conns });
    return 0;
  });
  const show = await outcome(async () => {
    const har = await readCapture(path, { allowIncomplete: true });
    const rows = entryRows(har);
    showText(filterRows(rows, {}, har), 0, plain);
    JSON.stringify({ entries: rows });
    return 0;
  });
  return { diff, frames, show };
}

/** One run of the real CLI (what runBb gives). */
export type CliRun = Pick<BbRun, 'code' | 'stdout' | 'stderr'>;

/** Why a CLI run is not acceptable for bad input, or undefined when it is. */
export function cliProblem(run: CliRun, mustBe2: boolean): string | undefined {
  const all = run.stdout + run.stderr;
  if (/\n\s+at .+:\d+:\d+\)?\n/.test(all) || /internal error/.test(all)) return `a stack trace or internal error:\n${all.slice(0, 1500)}`;
  if (run.code === 2) {
    const lines = run.stderr.split('\n').filter((l) => l !== '');
    if (lines.length !== 1) return `exit 2 with ${lines.length} lines on stderr:\n${run.stderr.slice(0, 1500)}`;
    if (!lines[0]!.startsWith('bb: ')) return `the line does not start with "bb: ": ${lines[0]}`;
    return undefined;
  }
  if (mustBe2) return `exit ${run.code}, expected 2; stderr: ${run.stderr.slice(0, 500)}`;
  if (run.code !== 0 && run.code !== 1) return `exit ${run.code}; stderr: ${run.stderr.slice(0, 500)}`;
  return undefined;
}

/** Runs `fn` over `items` with at most `limit` at once (2 cores: keep child processes few). */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** A small capture with what every reader looks at: query, JSON bodies, base64, a WebSocket, pages. */
export function baseCapture(): Har {
  const har = capture([
    { url: 'http://127.0.0.1:8080/a?x=1', body: { a: 1, items: [1, 2] }, requestBody: { p: 1 }, page: 'one' },
    { url: 'http://127.0.0.1:8080/bin', body: 'AAECAw==', mime: 'application/octet-stream' },
    {
      url: 'http://127.0.0.1:8080/ws',
      ws: [{ type: 'send', data: { op: 'hi' } }, { type: 'receive', data: 'eW8=', opcode: 2 }, { type: 'receive', data: 'A+g=', opcode: 8 }],
      close: { code: 1000, reason: '', by: 'client' },
    },
  ]);
  har.log.entries[1]!.response.content.encoding = 'base64';
  return har;
}

