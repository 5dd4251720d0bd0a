// An event stream for tests of a client that leaves it early (bb shadow's copies
// cut at the client's count, scenario/shadow/tee.ts; bb diff comparing a copy
// as far as its reference got, diff/compare-loop.ts): a feed of ten events over
// HTTP/1.1 or h2c, read through any proxy until a few came.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, constants, createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { readFileSync } from 'node:fs';
import { Client } from 'undici';
import type { Har } from '../../capture/index.js';
import type { Cleanups } from './cleanups.js';

/** A feed of ten events 30 ms apart (`firstMs` before the first; `extra`: one more event first, the new build's change; `burst`: all ten at once). */
export async function feed(closers: Cleanups, h2: boolean, firstMs = 0, extra = false, burst = false): Promise<string> {
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // The head goes at once (the mirrors start then), before any event.
    if ('flushHeaders' in res) res.flushHeaders();
    let n = 0;
    if (extra) res.write('data: {"n":0,"kind":"hello"}\n\n');
    let timer: NodeJS.Timeout | undefined;
    const start = setTimeout(() => {
      if (burst) {
        res.write(Array.from({ length: 10 }, (_, i) => `data: {"n":${i + 1},"kind":"tick"}\n\n`).join(''));
        return;
      }
      timer = setInterval(() => {
        res.write(`data: {"n":${++n},"kind":"tick"}\n\n`);
        if (n === 10) (clearInterval(timer), res.end());
      }, 30);
    }, firstMs);
    req.once('close', () => (clearTimeout(start), clearInterval(timer)));
  };
  const sessions = new Set<ServerHttp2Session>();
  const server = h2 ? createH2cServer(handle).on('session', (s) => (sessions.add(s), s.once('close', () => sessions.delete(s)))) : createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.add(async () => {
    for (const s of sessions) s.destroy();
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Reads the feed through `url` until `events` events came, then leaves. */
export async function readSome(url: string, h2: boolean, events: number): Promise<void> {
  let got = '';
  const enough = () => got.split('data:').length > events;
  if (!h2) {
    const c = new Client(url);
    const res = await c.request({ method: 'GET', path: '/feed' });
    for await (const chunk of res.body) if (((got += chunk), enough())) break;
    await c.destroy();
    return;
  }
  const session = connect(url);
  await new Promise<void>((resolve) => {
    const stream = session.request({ ':method': 'GET', ':path': '/feed' });
    stream.on('data', (chunk: Buffer) => {
      // Left as a browser leaves a stream (RST_STREAM CANCEL; random-walk.ts says why not NO_ERROR).
      if (((got += chunk), enough())) (stream.close(constants.NGHTTP2_CANCEL), resolve());
    });
  });
  await new Promise<void>((r) => session.close(() => r()));
}

/** Reads the feed through `url` to its end. */
export async function readAll(url: string, h2: boolean): Promise<string> {
  if (!h2) {
    const c = new Client(url);
    try {
      return await (await c.request({ method: 'GET', path: '/feed' })).body.text();
    } finally {
      await c.close();
    }
  }
  const session = connect(url);
  const stream = session.request({ ':method': 'GET', ':path': '/feed' });
  let got = '';
  stream.on('data', (chunk: Buffer) => (got += chunk));
  await new Promise((r) => stream.once('end', r));
  await new Promise<void>((r) => session.close(() => r()));
  return got;
}

/** Each entry's event count in the capture at `path`. */
export const eventsOf = (path: string): number[] => (JSON.parse(readFileSync(path, 'utf8')) as Har).log.entries.map((e) => (e.response.content.text ?? '').split('data:').length - 1);
