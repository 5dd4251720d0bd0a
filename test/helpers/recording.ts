// Shared by the bad-input and end-to-end tests: a recording proxy in a temp
// folder (its own bb home), the HAR it writes, a well-behaved client running
// alongside an offender, and small waiting helpers. Everything is loopback,
// bounded and cleaned up by the caller's after().
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { WebSocketServer } from 'ws';
import { startCapture, type CaptureHandle, type StartCaptureOptions } from '../../index.js';
import type { Har, HarEntry } from '../../capture/har.js';
import { assertValidHar } from './har-schema.js';
import type { Cleanups } from './cleanups.js';
import { closeHttpAndWs } from './servers.js';
import { tempDir } from './tmp.js';

/** A recording proxy whose HAR can be read back once. */
export interface Recording {
  cap: CaptureHandle;
  /** The proxy's port. */
  port: number;
  /** The folder holding the capture and the bb home. */
  dir: string;
  /** Closes proxy + capture, reads and schema-checks the HAR. */
  finish(): Promise<Har>;
}

/** Starts startCapture in front of `target`, writing into a fresh temp folder. */
export async function record(cleanups: Cleanups, target: string, opts: Partial<StartCaptureOptions> = {}): Promise<Recording> {
  const { dir } = tempDir(cleanups);
  const cap = await startCapture({ target, out: join(dir, 'cap.har'), bbHome: join(dir, 'home'), label: 'hard', ...opts });
  cleanups.add(() => cap.close(0));
  return {
    cap,
    dir,
    port: Number(new URL(cap.url).port),
    async finish() {
      const out = await cap.close(500);
      const har = JSON.parse(await readFile(out, 'utf8')) as Har;
      assertValidHar(har);
      return har;
    },
  };
}

/** An HTTP server that answers every request with "ok <path>", plus a WebSocket echo on any path. */
export async function echoServer(cleanups: Cleanups): Promise<{ url: string; port: number; requests(): number }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.length > 0 ? `ok ${req.url} ${body.length}` : `ok ${req.url}`;
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => closeHttpAndWs(server, wss));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, requests: () => requests };
}

/** One plain GET through the proxy with a fresh connection; resolves to status and body. */
export function get(port: number, path: string, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${path} timed out`)));
  });
}

/**
 * Runs `offend` while a good client sends GETs in a loop on its own
 * connections; returns how many good requests went through. Every good request
 * must get its own answer, or this throws. `origin` ("http://127.0.0.1:PORT")
 * makes the requests absolute-form, for a forward proxy.
 */
let alongsideRuns = 0;
export async function alongside(port: number, offend: () => Promise<void>, tag = 'good', origin = ''): Promise<number> {
  let stop = false;
  let n = 0;
  const run = ++alongsideRuns;
  const loop = (async () => {
    // Bounded: the offender decides the duration, and each GET has a 5 s timeout.
    while (!stop && n < 10_000) {
      const path = `/${tag}/${run}-${n}`;
      const r = await get(port, origin + path);
      if (r.status !== 200 || r.body !== `ok ${path}`) throw new Error(`good client got ${r.status} ${r.body} for ${path}`);
      n++;
    }
  })();
  try {
    await offend();
  } finally {
    stop = true;
  }
  await loop;
  // One more after the offence: the proxy is alive and answers correctly.
  const last = await get(port, `${origin}/${tag}/${run}-after`);
  if (last.body !== `ok /${tag}/${run}-after`) throw new Error(`proxy answered ${last.status} ${last.body} after the offence`);
  return n + 1;
}

/** Polls `ok` every 10 ms up to timeoutMs. */
export async function waitUntil(ok: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Entries whose request URL path starts with `prefix`. */
export function entriesUnder(har: Har, prefix: string): HarEntry[] {
  return har.log.entries.filter((e) => {
    try {
      return new URL(e.request.url).pathname.startsWith(prefix);
    } catch {
      return false;
    }
  });
}
