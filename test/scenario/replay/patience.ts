// A server that never answers some paths, and a capture of a client that
// gave up on one of them: the fixtures of the replay's patience tests (a
// request the original client aborted, --timeout, Ctrl-C during a wait).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { startRecording } from '../../../scenario/index.js';
import type { Har } from '../../../capture/index.js';
import { atFileEnd } from '../../helpers/cleanups.js';
import { closeHttpAndWs } from '../../helpers/servers.js';

/** A server that answers every path but those in `hang`, which it holds open until the client leaves. */
export interface PatientServer {
  url: string;
  /** Paths it never answers. */
  hang: Set<string>;
  /** "METHOD path" of each request, as it arrived. */
  arrived: string[];
  /** "METHOD path" of each held request, when its client hung up. */
  abandoned: string[];
  /** Resolves when a request for `path` has arrived. */
  arrival(path: string): Promise<void>;
  close(): Promise<void>;
}

/** A HAR file, parsed. */
export const readHar = async (path: string): Promise<Har> => JSON.parse(await readFile(path, 'utf8'));

/** Starts one on 127.0.0.1, port 0, closed when the test file ends. */
export async function startPatientServer(hang: string[] = ['/hang']): Promise<PatientServer> {
  const arrived: string[] = [];
  const abandoned: string[] = [];
  const waiters: Array<{ path: string; resolve: () => void }> = [];
  const held = new Set<http.ServerResponse>();
  const hanging = new Set(hang);
  const server = http.createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    arrived.push(`${req.method} ${path}`);
    for (const w of waiters.filter((w) => w.path === path)) w.resolve();
    req.resume();
    if (hanging.has(path)) {
      held.add(res);
      res.on('close', () => {
        held.delete(res);
        abandoned.push(`${req.method} ${path}`);
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  let closed: Promise<void> | undefined;
  const close = () => {
    for (const res of held) res.destroy();
    return (closed ??= closeHttpAndWs(server));
  };
  atFileEnd(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hang: hanging,
    arrived,
    abandoned,
    arrival: (path) => (arrived.some((a) => a.endsWith(` ${path}`)) ? Promise.resolve() : new Promise((resolve) => waiters.push({ path, resolve }))),
    close,
  };
}

/** Sends GET `path` to `url` and resolves with its status, or 'aborted' when `abortAfterMs` passes first. */
export function get(url: string, path: string, abortAfterMs?: number): Promise<number | 'aborted'> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${path}`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    const timer = abortAfterMs === undefined ? undefined : setTimeout(() => {
      req.destroy();
      resolve('aborted');
    }, abortAfterMs);
    req.on('error', (err) => (timer ? undefined : reject(err)));
    req.on('close', () => clearTimeout(timer));
  });
}

/**
 * Records GET /first, GET `path` and GET /last through bb's proxy into `out`.
 * With `abortAfterMs` the server holds `path` open and the client gives up
 * after that long; without it the server answers at once.
 */
export async function recordPatience(out: string, bbHome: string, path: string, abortAfterMs?: number): Promise<string> {
  const server = await startPatientServer(abortAfterMs === undefined ? [] : [path]);
  const rec = await startRecording({ target: server.url, out, label: 'patience', bbHome, listen: { host: '127.0.0.1', port: 0 } });
  try {
    await get(rec.url, '/first');
    await get(rec.url, path, abortAfterMs);
    await get(rec.url, '/last');
  } finally {
    await rec.close(1000);
    await server.close();
  }
  return rec.out;
}
