// Hand-made HARs for the inspect tests, in the shapes other producers write,
// and a runner for the bb CLI.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/bb.js', import.meta.url));

/** One message as a producer writes it. */
export interface Msg {
  type: 'send' | 'receive' | 'error';
  time: number;
  opcode: number;
  data: string;
  _bb?: Record<string, unknown>;
}

/** A HAR entry with what readers require, plus overrides. */
export function entry(url: string, startedDateTime: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { status = 200, method = 'GET', ...rest } = extra as { status?: number; method?: string };
  return {
    startedDateTime,
    time: 12,
    request: { method, url, httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: 0 },
    response: {
      status, statusText: '', httpVersion: 'HTTP/1.1', cookies: [], headers: [],
      content: { size: 42, mimeType: 'application/json' }, redirectURL: '', headersSize: -1, bodySize: 40,
    },
    cache: {},
    timings: { send: 1, wait: 10, receive: 1 },
    ...rest,
  };
}

/** A WebSocket entry (Chrome's marker, a 101, messages). */
export function wsEntry(url: string, startedDateTime: string, messages: Msg[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return entry(url, startedDateTime, { status: 101, _resourceType: 'websocket', _webSocketMessages: messages, ...extra });
}

/** A HAR document. */
export function har(entries: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): unknown {
  return { log: { version: '1.2', creator: { name: 'test', version: '1' }, pages: [], entries, ...extra } };
}

/** What a CLI run gave. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bb args...` to the end (bounded), with a clean colour environment unless `env` says otherwise. */
export function bb(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const base = { ...process.env };
    delete base['NO_COLOR'];
    delete base['FORCE_COLOR'];
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...base, COLUMNS: '100', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
