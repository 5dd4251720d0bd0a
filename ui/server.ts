// bb's live web view: one page on a loopback port, its files from ui/assets/
// (shipped in the package, no build step, nothing from the network), and
// feeds of typed events streamed to it as server-sent events.
//
//   GET /                   the page (assets/index.html)
//   GET /app.js, /app.css   the page's script and style
//   GET /frames-search.js   the frames search, the same script bb frames --html runs
//   GET /views/<name>.js    the script of each registered view
//   GET /api/views          {"title", "views": [{name, title}]}
//   GET /api/feeds          {"max", "pages": [FeedStat]}: each open feed's queued bytes (feed-stream.ts)
//   GET /feed/<name>[?key=] text/event-stream: one `data: <json event>` per event,
//                           first what the feed knows now, then what happens; a page
//                           that stops reading falls behind and is sent {type:"resync"}
//                           and a fresh snapshot when it drains (feed-stream.ts)
//   POST /action/<name>     a registered action (`bb shadow --ui` writes the config):
//                           a JSON body in, a JSON answer out; only with the run's
//                           token (X-BB-Token, given to the page in /api/views)
//
// A view is a script that draws from feeds; `bb capture --ui` registers the
// capture view and its feeds (capture-feed.ts), and another command can add
// its own views and feeds the same way. Requests from web pages (a foreign
// Host or Origin: DNS rebinding, another origin's fetch) get 403 by the rule
// the admin endpoint uses (core/local-request.ts). Every answer carries a CSP
// that runs only the page's own scripts and shows images only from data: URLs
// (bodies the page builds from captured bytes): captured content is hostile
// input, the page renders it as text. An action also needs the token of this
// run: a page of another origin cannot read /api/views (no CORS), so it cannot
// send it, and a custom header is never sent by a form.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { FRAMES_SEARCH_SCRIPT } from '../inspect/index.js';
import { parseFieldPath } from '../diff/index.js';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { FeedStream, FEED_QUEUE_MAX, type UiFeed } from './feed-stream.js';
import { BbError, foreignRequestReason, isBbError, isLoopbackHost, listenFailureWhy, visibleText } from '../core/index.js';

export type { UiEvent, UiFeed } from './feed-stream.js';

/** A view of the page: a tab whose script is assets/views/<name>.js. */
export interface UiView {
  /** Its script's name (assets/views/<name>.js): letters, digits, '-'. */
  name: string;
  /** The tab's label. */
  title: string;
}

/** Something the page may ask the command to do (POST /action/<name>). */
export interface UiAction {
  /** Its name in /action/<name>: letters, digits, '-'. */
  name: string;
  /** Runs it with the request's JSON body; resolves to the JSON answer. A BbError is the page's mistake (400, its sentence). */
  run(body: unknown): Promise<unknown>;
}

/** How to start the live view. */
export interface UiOptions {
  /** Loopback address; default 127.0.0.1 on a free port. */
  listen?: { host?: string; port?: number };
  /** The page's title ("bb capture"). */
  title: string;
  /** The views, in tab order. */
  views: UiView[];
  /** The feeds the views read. */
  feeds: UiFeed[];
  /** What the page may ask for (default none). */
  actions?: UiAction[];
  /** Bytes of updates one page may have queued before it falls behind and is resynced (default FEED_QUEUE_MAX, 1 MiB). */
  feedQueueMax?: number;
}

/** A running live view. */
export interface UiServer {
  /** The page's URL, e.g. http://127.0.0.1:41234/. */
  url: string;
  /** Ends every feed and stops listening. */
  close(): Promise<void>;
}

/** The CSP of every answer: the page's own scripts and styles, images from data: URLs only, nothing else. */
export const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const NAME = /^[a-z0-9-]+$/i;
/** The largest action body read. */
const ACTION_BODY_MAX = 64 * 1024;
const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** ui/assets/ beside this file when run from source, else the package's ui/assets/ (this file runs as dist/ui/server.js). */
function assetsDir(): string {
  const beside = new URL('./assets/', import.meta.url);
  return fileURLToPath(existsSync(beside) ? beside : new URL('../../ui/assets/', import.meta.url));
}

/** The page's files by URL path, read once. */
function loadAssets(views: UiView[]): Map<string, { type: string; body: Buffer }> {
  const dir = assetsDir();
  const files = new Map<string, string>([['/', 'index.html'], ['/app.js', 'app.js'], ['/app.css', 'app.css']]);
  for (const v of views) files.set(`/views/${v.name}.js`, `views/${v.name}.js`);
  const assets = new Map([...files].map(([path, file]) => [path, { type: TYPES[file.split('.').pop()!]!, body: readFileSync(dir + file) }]));
  // The frames search of `bb frames --html`, one script for both pages (inspect/frames-search.ts).
  assets.set('/frames-search.js', { type: TYPES['js']!, body: Buffer.from(FRAMES_SEARCH_SCRIPT) });
  // Functions the page shares with bb, their text served from their source (each self-contained): the diff's
  // field-path parser (a finding's `response.body["@type"]` read with the grammar that wrote it) and the escape of
  // captured text's controls and bidi characters that bb shadow's terminal lines use too (core/visible.ts).
  assets.set('/shared.js', { type: TYPES['js']!, body: Buffer.from(`var bbParseFieldPath=(${parseFieldPath.toString()});\nvar bbVisibleText=(${visibleText.toString()});\n`) });
  return assets;
}

/** Refuses a --ui address other machines could reach. */
export function checkUiAddress(host: string): void {
  if (!isLoopbackHost(host)) {
    throw new BbError('BB_UI_NOT_LOOPBACK', `--ui must bind a loopback address like 127.0.0.1:0; '${host}' would show the captured traffic to other machines`);
  }
}

/** Starts the live view on loopback; refuses any other address. */
export async function startUi(options: UiOptions): Promise<UiServer> {
  const host = options.listen?.host ?? '127.0.0.1';
  checkUiAddress(host);
  for (const n of [...options.views, ...options.feeds, ...(options.actions ?? [])].map((x) => x.name)) {
    if (!NAME.test(n)) throw new BbError('BB_USAGE', `a view or feed name is letters, digits and '-', got '${n}'`);
  }
  const assets = loadAssets(options.views);
  const feeds = new Map(options.feeds.map((f) => [f.name, f]));
  const actions = new Map((options.actions ?? []).map((a) => [a.name, a]));
  // The run's token: a page of this origin reads it from /api/views; no other page can.
  const token = randomBytes(18).toString('base64url');
  const views = JSON.stringify({ title: options.title, views: options.views.map(({ name, title }) => ({ name, title })), token });
  const streams = new Set<FeedStream>();
  let port = 0;

  const server = http.createServer((req, res) => {
    res.setHeader('Content-Security-Policy', UI_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-store');
    const refusal = foreignRequestReason(req.headersDistinct, port);
    if (refusal) return answer(res, 403, 'text/plain; charset=utf-8', refusal + '\n', true);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const action = req.method === 'POST' && url.pathname.startsWith('/action/') ? actions.get(url.pathname.slice('/action/'.length)) : undefined;
    if (action) return runAction(action, token, req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'text/plain; charset=utf-8', 'the live view answers GET, and POST to its actions\n', true);
    const asset = assets.get(url.pathname);
    if (asset) return answer(res, 200, asset.type, asset.body);
    if (url.pathname === '/api/views') return answer(res, 200, 'application/json', views);
    if (url.pathname === '/api/feeds') return answer(res, 200, 'application/json', JSON.stringify({ max: options.feedQueueMax ?? FEED_QUEUE_MAX, pages: [...streams].map((s) => s.stat()) }));
    const feed = url.pathname.startsWith('/feed/') ? feeds.get(url.pathname.slice('/feed/'.length)) : undefined;
    if (!feed) return answer(res, 404, 'text/plain; charset=utf-8', 'not a page of the live view\n');
    const stream = new FeedStream(feed, url.searchParams.get('key') ?? undefined, res, options.feedQueueMax ?? FEED_QUEUE_MAX, () => streams.delete(stream));
    if (stream.start()) streams.add(stream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new BbError('BB_UI_LISTEN', `cannot listen on --ui ${host}:${options.listen?.port ?? 0}: ${listenFailureWhy(err, '--ui')}`)),
    );
    server.listen(options.listen?.port ?? 0, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  port = a.port;
  return {
    url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of [...streams]) stream.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: http.ServerResponse, status: number, type: string, body: string | Buffer, close = false): void {
  // A refused request's body, if any, is not read.
  if (close) res.setHeader('Connection', 'close');
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * One POST to an action: the run's token in X-BB-Token (403 without it: a
 * page of another origin never has it), a JSON body of at most
 * ACTION_BODY_MAX bytes, a JSON answer; a BbError is a 400 with its sentence.
 */
function runAction(action: UiAction, token: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const json = (status: number, value: unknown): void => answer(res, status, 'application/json', JSON.stringify(value), status >= 400);
  if (req.headers['x-bb-token'] !== token) return json(403, { error: 'refused: no token of this run (X-BB-Token); reload the page' });
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) return json(415, { error: 'an action takes a JSON body (Content-Type: application/json)' });
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= ACTION_BODY_MAX) chunks.push(c);
  });
  req.on('end', () => {
    if (size > ACTION_BODY_MAX) return json(413, { error: `an action's body is at most ${ACTION_BODY_MAX} bytes` });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return json(400, { error: 'the body is not JSON' });
    }
    action.run(body).then(
      (value) => json(200, value ?? {}),
      (err: unknown) => json(isBbError(err) ? 400 : 500, { error: (err as Error).message, ...(isBbError(err) ? { code: err.code } : {}) }),
    );
  });
}
