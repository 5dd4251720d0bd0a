// bb's live view (`--ui`) in headless Debian chromium, as the browser tests
// open it: the page's URL from bb's `bb: ui:` line, and a page that records
// every request it makes elsewhere and every console error, so a test can
// say it loaded nothing from the network and ran nothing that failed.
import assert from 'node:assert/strict';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumLaunchOptions } from './browser-app.js';
import { join } from 'node:path';
import { startBb, type BbProcess } from './cli.js';
import type { UiFeed } from '../../ui/index.js';

/** Waits for bb's `bb: ui: URL` line on stderr (up to 10 s); returns the URL. */
export async function liveViewUrl(bb: BbProcess): Promise<string> {
  for (let i = 0; i < 500 && !/bb: ui: /.test(bb.stderr()); i++) await new Promise((r) => setTimeout(r, 20));
  return /bb: ui: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(bb.stderr())?.[1] ?? assert.fail(`no ui line: ${bb.stderr()}`);
}

/** An open live view. */
export interface LiveViewPage {
  browser: Browser;
  page: Page;
  /** Requests the page made that were not to the live view itself (nor data: URLs). */
  elsewhere: string[];
  /** Console errors and uncaught exceptions in the page. */
  complaints: string[];
}

/** Launches chromium and opens the live view at `ui`. */
export async function openLiveView(ui: string, viewport: { width: number; height: number }): Promise<LiveViewPage> {
  const browser = await chromium.launch(chromiumLaunchOptions());
  const page = await browser.newPage({ viewport });
  const elsewhere: string[] = [];
  const complaints: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(ui) && !r.url().startsWith('data:')) elsewhere.push(r.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error') complaints.push(m.text());
  });
  page.on('pageerror', (e) => complaints.push(e.message));
  await page.goto(ui);
  return { browser, page, elsewhere, complaints };
}

/** `bb capture --target TARGET --ui` (its HAR and home in `dir`) with its live view open in chromium. */
export interface LiveCaptureInBrowser extends LiveViewPage {
  bb: BbProcess;
  /** The recording proxy's URL. */
  proxy: string;
  /** The live view's URL. */
  ui: string;
  /** Closes the browser, then ends bb with SIGINT (it writes its HAR) and waits for it. */
  stop(): Promise<void>;
}

/** Starts `bb capture --ui` in front of `target` as users run it and opens its live view. */
export async function liveCaptureInBrowser(target: string, dir: string, viewport: { width: number; height: number }): Promise<LiveCaptureInBrowser> {
  const bb = startBb(['capture', '--target', target, '--ui', '--out', join(dir, 'live.har')], { BB_HOME: join(dir, 'home') }, { timeoutMs: 120_000 });
  const proxy = (await bb.waitFor(/bb: capture: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  const ui = await liveViewUrl(bb);
  const view = await openLiveView(ui, viewport);
  return {
    ...view,
    bb,
    proxy,
    ui,
    async stop() {
      await view.browser.close();
      bb.child.kill('SIGINT');
      await bb.exited;
    },
  };
}

/** The capture view's three feeds for a test's own exchanges feed (and frames feed); the exchange feed knows nothing. */
export function captureViewFeeds(exchanges: UiFeed['open'], frames?: UiFeed['open']): UiFeed[] {
  return [
    { name: 'exchanges', open: exchanges },
    { name: 'exchange', open: () => undefined },
    { name: 'frames', open: frames ?? ((_key, send) => (send({ type: 'captures', labels: ['capture'] }), () => {})) },
  ];
}

/** Opens the exchange whose path is `path` in the capture view, on its messages tab; its `trees` decoded gRPC messages' rows as "name type value" lines. */
export async function openGrpcMessages(p: Page, path: string, trees: number): Promise<string[][]> {
  await p.waitForFunction((q) => [...document.querySelectorAll('.list .row .c-path')].some((c) => c.textContent === q), path);
  await p.evaluate((q) => [...document.querySelectorAll<HTMLElement>('.list .row .c-path')].find((c) => c.textContent === q)!.click(), path);
  await p.waitForSelector('.detail .dtabs button[data-tab="messages"]');
  await p.click('.detail .dtabs button[data-tab="messages"]');
  await p.waitForFunction((n) => document.querySelectorAll('.detail .messages .proto').length === n, trees);
  return p.$$eval('.detail .messages .proto', (boxes) =>
    boxes.map((box) => [...box.querySelectorAll('.pf')].map((r) => [...r.children].map((c) => c.textContent).join(' '))),
  );
}
