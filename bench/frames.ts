// `bb frames --html` on a big capture: how long bb takes to write the page
// and how long headless chromium takes to open it, for 50,000 messages and
// — the baseline, in the same run — 1,000.
//
//   npm run bench -- frames [--quick] [--messages 50000] [--rounds 3]
//
// The capture: five WebSocket connections taking turns at random (a fixed
// seed), JSON text of 60–400 bytes, some binary messages and pings, a step
// every 5,000 messages, close frames at the end; bb-shaped (`_bb.seq`).
// Three clocks for opening the page: "first rows" is when the page's script
// has drawn the rows in view (its performance mark, from navigation start);
// "all parsed" is DOMContentLoaded (the payload block after the script read
// too); "open (Node)" is page.goto(file://…) until Node sees the drawn rows.
// The 3 s target is for the slowest of them.
// Needs a built dist/ (npm run bench builds it) and Debian's chromium.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, chromiumLaunchOptions } from '../test/helpers/browser-app.js';
import { markdownTable, num, auto } from './lib/table.js';
import { percentile } from './lib/stats.js';
import { rng } from './gen-capture.js';

const BIN = fileURLToPath(new URL('../bin/bb.js', import.meta.url));

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}


/** Writes a bb-shaped capture with `messages` WebSocket messages across five connections. */
export async function writeFramesCapture(path: string, messages: number): Promise<number> {
  // The same capture on every run.
  const r = rng(7);
  const conns = 5;
  const t0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
  let seq = 0;
  let time = t0;
  const pages: Array<{ startedDateTime: string; id: string; title: string; pageTimings: object }> = [];
  const lists: Array<Array<Record<string, unknown>>> = Array.from({ length: conns }, () => []);
  const starts = Array.from({ length: conns }, () => ({ seq: ++seq, time: (time += 0.001) }));
  let page = '';
  for (let i = 0; i < messages - conns * 2; i++) {
    if (i % 5000 === 0) {
      page = `page_${pages.length + 1}`;
      pages.push({ startedDateTime: new Date(time * 1000).toISOString(), id: page, title: `step ${pages.length + 1}`, pageTimings: {} });
    }
    time += r() * 0.02;
    const c = Math.floor(r() * conns);
    const send = r() < 0.35;
    const kind = r();
    let m: Record<string, unknown>;
    if (kind < 0.05) m = { type: send ? 'send' : 'receive', opcode: 2, data: Buffer.from(Array.from({ length: 16 + Math.floor(r() * 64) }, () => Math.floor(r() * 256))).toString('base64') };
    else if (kind < 0.07) m = { type: send ? 'send' : 'receive', opcode: send ? 9 : 10, data: Buffer.from('keepalive').toString('base64') };
    else {
      const body = { type: send ? 'subscribe' : 'event', id: i, channel: `ch-${c}`, at: new Date(time * 1000).toISOString(), values: Array.from({ length: 1 + Math.floor(r() * 12) }, () => Math.round(r() * 1e6) / 100) };
      m = { type: send ? 'send' : 'receive', opcode: 1, data: JSON.stringify(body) };
    }
    lists[c]!.push({ ...m, time, _bb: { seq: ++seq, page } });
  }
  const closeData = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('done')]).toString('base64');
  for (let c = 0; c < conns; c++) {
    lists[c]!.push({ type: 'send', time: (time += 0.001), opcode: 8, data: closeData, _bb: { seq: ++seq, page, code: 1000, reason: 'done' } });
    lists[c]!.push({ type: 'receive', time: (time += 0.001), opcode: 8, data: closeData, _bb: { seq: ++seq, page, code: 1000, reason: 'done' } });
  }
  const entries = lists.map((list, c) => ({
    startedDateTime: new Date(starts[c]!.time * 1000).toISOString(), time: 1, pageref: pages[0]?.id,
    request: { method: 'GET', url: `http://127.0.0.1:3001/v1/stream/${c}`, httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Upgrade', value: 'websocket' }], queryString: [], headersSize: -1, bodySize: 0 },
    response: { status: 101, statusText: 'Switching Protocols', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: 'x-unknown' }, redirectURL: '', headersSize: -1, bodySize: 0 },
    cache: {}, timings: { send: 0, wait: 1, receive: 0 }, connection: `c${c + 1}`,
    _resourceType: 'websocket', _webSocketMessages: list,
    _bb: { seq: starts[c]!.seq, seqEnd: starts[c]!.seq, close: { code: 1000, reason: 'done', by: 'client', time } },
  }));
  const doc = {
    log: {
      version: '1.2', creator: { name: 'bb', version: '0.1.0' }, pages, entries,
      _bb: { format: 1, label: 'bench', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', startedDateTime: new Date(t0 * 1000).toISOString(), endedDateTime: new Date(time * 1000).toISOString(), complete: true, counts: { entries: conns, webSocketMessages: messages } },
    },
  };
  const text = JSON.stringify(doc);
  await writeFile(path, text, { mode: 0o600 });
  return Buffer.byteLength(text);
}

/** Runs `bb frames CAPTURE --html OUT --force` (each round writes the page again); resolves with its wall-clock seconds. */
async function writePage(capture: string, out: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'frames', capture, '--html', out, '--force'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`bb frames --html exited ${code}: ${err}`);
  return (performance.now() - started) / 1000;
}

/** Opens the page in a fresh context: ms until first rows (Node's clock, the page's), then the first click. */
async function openPage(browser: Browser, file: string): Promise<{ openMs: number; firstRowsMs: number; parsedMs: number; clickMs: number; elements: number; searchMs: number[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const started = performance.now();
  await page.goto(pathToFileURL(file).href, { waitUntil: 'commit' });
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60_000 });
  const openMs = performance.now() - started;
  await page.waitForFunction(() => document.readyState !== 'loading');
  const [firstRowsMs, parsedMs] = await page.evaluate(() => [
    performance.getEntriesByName('bb-ready')[0]!.startTime,
    (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).domContentLoadedEventEnd,
  ]);
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  // The first click parses every payload (the #bb-payloads block).
  const clickStarted = performance.now();
  await page.click('#rows .row >> nth=3');
  await page.waitForSelector('#panel:not([hidden])');
  const clickMs = performance.now() - clickStarted;
  // The search box: the page times each query itself (body[data-search-ms]); the first builds the index.
  const searchMs: number[] = [];
  for (const q of ['"ch-3"', '"ch-3" dir:receive', 'event 12']) {
    await page.fill('#search', q);
    searchMs.push(Number(await page.evaluate(() => document.body.dataset.searchMs)));
  }
  await context.close();
  if (errors.length) throw new Error(`the page failed: ${errors.join('; ')}`);
  return { openMs, firstRowsMs, parsedMs, clickMs, elements, searchMs };
}

/** Entry point for bench/lib/area.ts. */
export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const big = Number(option(args, '--messages') ?? 50_000);
  const rounds = Number(option(args, '--rounds') ?? (quick ? 1 : 3));
  console.log('\n## frames\n');
  if (!CHROMIUM) {
    console.log('Debian chromium is not installed (apt-get install chromium): skipped.');
    return;
  }
  console.log(`\`bb frames --html\`, ${rounds} round${rounds === 1 ? '' : 's'}; ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(1)).join(' ')} at start.\n`);
  const dir = await mkdtemp(join(tmpdir(), 'bb-bench-frames-'));
  const browser = await chromium.launch(chromiumLaunchOptions());
  try {
    const sizes = [1000, big];
    const rows: string[][] = [];
    const opens = new Map<number, number[]>();
    for (const n of sizes) {
      const capture = join(dir, `${n}.har`);
      const out = join(dir, `${n}.html`);
      const bytes = await writeFramesCapture(capture, n);
      const write: number[] = [];
      const open: number[] = [];
      const firstRows: number[] = [];
      const parsed: number[] = [];
      const click: number[] = [];
      const firstSearch: number[] = [];
      const search: number[] = [];
      let elements = 0;
      for (let i = 0; i < rounds; i++) {
        write.push(await writePage(capture, out));
        const o = await openPage(browser, out);
        open.push(o.openMs);
        firstRows.push(o.firstRowsMs);
        parsed.push(o.parsedMs);
        click.push(o.clickMs);
        firstSearch.push(o.searchMs[0]!);
        search.push(...o.searchMs.slice(1));
        elements = o.elements;
      }
      opens.set(n, open.map((ms, k) => Math.max(ms, parsed[k]!)));
      const med = (s: number[]): number => percentile([...s], 50);
      const html = (await stat(out)).size;
      rows.push([
        num(n), `${auto(bytes / 1048576)} MB`, `${auto(html / 1048576)} MB`, `${auto(med(write))} s`,
        `${auto(med(firstRows))} ms`, `${auto(med(parsed))} ms`, `${auto(med(open))} ms`, `${auto(med(click))} ms`,
        `${auto(med(firstSearch))} ms`, `${auto(med(search))} ms`, num(elements),
      ]);
    }
    console.log(markdownTable(['messages', 'capture', 'page', 'bb writes it', 'first rows', 'all parsed', 'open (Node)', 'first click', 'first search', 'search', 'DOM elements'], rows));
    const med = (s: number[] | undefined): number => percentile([...(s ?? [])], 50);
    const bigOpen = med(opens.get(big));
    console.log(`\n${num(big)} messages: page open in ${(bigOpen / 1000).toFixed(2)} s (median of the slower of "all parsed" and "open (Node)"; target under 3 s), ${(bigOpen / med(opens.get(1000))).toFixed(2)}× the 1,000-message page.`);
  } finally {
    await browser.close();
    await rm(dir, { recursive: true, force: true });
  }
}
