// When a starting server is ready: a stdout line (with an optional JSON
// payload), a port that accepts connections, a health URL that answers 2xx,
// in that order, within one deadline. A server that exits first, or never
// gets there, fails with a BbError naming it, its log and its last lines.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { BbError, type BbCode } from '../../../core/index.js';
import { describeExit, type ExitInfo } from './process-group.js';
import type { ReadinessSpec } from './spec.js';

/** What readiness watches of a starting server. */
export interface StartingServer {
  /** Its label, for messages. */
  readonly label: string;
  /** Settles when the spawned process exits. */
  readonly exited: Promise<ExitInfo>;
  /** How it exited, once it has. */
  exitInfo(): ExitInfo | undefined;
  /** Why it could not be spawned, if so. */
  spawnError(): Error | undefined;
  /** Calls `fn` with each stdout line until the returned function is called. */
  onStdoutLine(fn: (line: string) => void): () => void;
  /** A BbError naming the server, its log and its last lines. */
  failure(what: string, code: BbCode): BbError;
}

/** Where a ready server listens and what it said. */
export interface Readiness {
  /** Origin to send traffic to, e.g. http://127.0.0.1:40123. */
  url: string;
  /** The readiness payload (the JSON of the READY line, else { port }). */
  ready: Record<string, unknown>;
}

/** Resolves when every readiness condition holds; throws naming the server otherwise. */
export async function waitReady(server: StartingServer, spec: ReadinessSpec, timeoutMs: number): Promise<Readiness> {
  const deadline = Date.now() + timeoutMs;
  let awaiting = '';
  const attempt = async (): Promise<Readiness> => {
    let ready: Record<string, unknown> = {};
    let port = spec.port;
    if (spec.line !== undefined) {
      awaiting = `a stdout line matching /${spec.line}/`;
      ready = await waitLine(server, spec.line, deadline);
      if (typeof ready.port === 'number') port = ready.port;
    }
    if (port !== undefined && spec.line === undefined) {
      awaiting = `port ${port} to accept connections`;
      await probePort(server, port, deadline);
      ready = { port };
    }
    let origin = port !== undefined ? `http://127.0.0.1:${port}` : '';
    if (spec.health !== undefined) {
      const health = /^https?:/.test(spec.health) ? spec.health : origin + spec.health;
      if (!/^https?:/.test(health)) throw new BbError('BB_CONFIG_INVALID', `server "${server.label}": health path ${spec.health} needs a port (ready.port or a READY payload with "port").`);
      awaiting = `${health} to answer 2xx`;
      await probeHealth(server, health, deadline);
      if (!origin) origin = new URL(health).origin;
      if (!('port' in ready)) ready = { ...ready, port: Number(new URL(health).port) };
    }
    if (!origin) {
      throw new BbError('BB_SERVER_NO_PORT', `server "${server.label}" gave no port: print READY {"port": N}, or set ready.port or ready.health in the config.`);
    }
    return { url: origin, ready };
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(server.failure(`was not ready within ${timeoutMs} ms (waiting for ${awaiting})`, 'BB_SERVER_NOT_READY')),
      Math.max(0, deadline - Date.now()),
    );
  });
  const died = server.exited.then((exit) => {
    // Let the last output arrive so the tail shows why.
    return sleep(50).then(() => {
      const spawnError = server.spawnError();
      if (spawnError) throw server.failure(`could not be started: ${spawnError.message}`, 'BB_SERVER_SPAWN');
      throw server.failure(`exited with ${describeExit(exit)} before it was ready`, 'BB_SERVER_EXITED');
    });
  });
  try {
    return await Promise.race([attempt(), timedOut, died]);
  } finally {
    clearTimeout(timer);
    died.catch(() => {});
  }
}

/** The payload of the first stdout line matching `pattern`: the JSON after the match, or {}. */
function waitLine(server: StartingServer, pattern: string, deadline: number): Promise<Record<string, unknown>> {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (e) {
    return Promise.reject(new BbError('BB_CONFIG_INVALID', `server "${server.label}": ready.line /${pattern}/ is not a valid regex: ${(e as Error).message}.`));
  }
  return new Promise((resolve, reject) => {
    const stopWatching = server.onStdoutLine((line) => {
      const m = re.exec(line);
      if (!m) return;
      const rest = line.slice(m.index + m[0].length).trim();
      let payload: Record<string, unknown> = {};
      if (rest.startsWith('{')) {
        try {
          payload = JSON.parse(rest) as Record<string, unknown>;
        } catch {
          stopWatching();
          reject(server.failure(`printed a READY line whose payload is not JSON: ${rest.slice(0, 200)}`, 'BB_SERVER_BAD_READY'));
          return;
        }
      }
      stopWatching();
      resolve(payload);
    });
    setTimeout(stopWatching, Math.max(0, deadline - Date.now())).unref();
  });
}

/** Returns once the port accepts a connection; never settles otherwise (the deadline or the exit reports it). */
async function probePort(server: StartingServer, port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline && !server.exitInfo()) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.setTimeout(500);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  await new Promise(() => {}); // the timeout or the exit watcher reports it
}

/** Returns once the URL answers 2xx; never settles otherwise (the deadline or the exit reports it). */
async function probeHealth(server: StartingServer, url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline && !server.exitInfo()) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer().catch(() => {});
      if (res.status >= 200 && res.status < 300) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  await new Promise(() => {});
}
