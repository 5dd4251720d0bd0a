// Shared by the capture tests: literal facts in, a validated HAR out.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FactBus, type Fact, type RawHeaders } from '../../proxy/events.js';
import { openCapture, type CaptureOptions } from '../../capture/index.js';
import type { Har, HarEntry } from '../../capture/har.js';
import { assertValidHar } from '../helpers/har-schema.js';

/** Records the facts into a fresh capture and returns the parsed, schema-checked HAR. */
export async function recordFacts(
  dir: string,
  bbHome: string,
  facts: Fact[],
  opts: Partial<CaptureOptions> & { name?: string; steps?: Record<number, string> } = {},
): Promise<Har> {
  const out = join(dir, `${opts.name ?? 'cap'}.har`);
  const capture = await openCapture({
    out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome, ...opts,
  });
  const bus = new FactBus();
  bus.on(capture.listener);
  facts.forEach((f, i) => {
    const step = opts.steps?.[i];
    if (step !== undefined) capture.step(step);
    bus.emit(f);
  });
  assert(bus.listenerErrors.length === 0, `listener threw: ${bus.listenerErrors[0]?.stack}`);
  await capture.close();
  const har = JSON.parse(await readFile(out, 'utf8')) as Har;
  assertValidHar(har);
  return har;
}

function assert(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

let nextId = 1;
const T0 = Date.UTC(2025, 0, 2, 3, 4, 5, 0);

/** Options for one literal HTTP exchange. */
export interface ExchangeSpec {
  id?: number;
  connectionId?: string;
  method?: string;
  target?: string;
  scheme?: 'http' | 'https';
  reqHeaders?: RawHeaders;
  reqBody?: Buffer[];
  status?: number;
  statusMessage?: string;
  resHeaders?: RawHeaders;
  resBody?: Buffer[];
  /** ms since T0 when the exchange starts. */
  at?: number;
  /** How it ends (default completed). */
  end?: 'completed' | 'none' | Fact;
  trailers?: RawHeaders;
}

/** The facts of one HTTP exchange, times 1 ms apart from its start. */
export function exchange(spec: ExchangeSpec = {}): Fact[] {
  const x = spec.id ?? nextId++;
  let t = T0 + (spec.at ?? 0);
  const tick = () => (t += 1);
  const facts: Fact[] = [{
    type: 'exchange-started', exchangeId: x, connectionId: spec.connectionId ?? 'c1', time: t,
    scheme: spec.scheme ?? 'http', method: spec.method ?? 'GET', target: spec.target ?? '/',
    httpVersion: '1.1', rawHeaders: spec.reqHeaders ?? ['Host', '127.0.0.1:8080'],
    upstream: 'http://127.0.0.1:3001', upgrade: false,
  }];
  for (const chunk of spec.reqBody ?? []) facts.push({ type: 'request-body', exchangeId: x, time: tick(), chunk });
  facts.push({ type: 'request-ended', exchangeId: x, time: tick(), rawTrailers: [] });
  if (spec.status !== undefined) {
    facts.push({
      type: 'response-started', exchangeId: x, time: tick(), statusCode: spec.status,
      statusMessage: spec.statusMessage ?? 'OK', httpVersion: '1.1', rawHeaders: spec.resHeaders ?? [],
    });
    for (const chunk of spec.resBody ?? []) facts.push({ type: 'response-body', exchangeId: x, time: tick(), chunk });
  }
  const end = spec.end ?? 'completed';
  if (end === 'completed') facts.push({ type: 'exchange-completed', exchangeId: x, time: tick(), rawTrailers: spec.trailers ?? [] });
  else if (end !== 'none') facts.push({ ...end, exchangeId: x, time: tick() } as Fact);
  return facts;
}

/** The only entry of a HAR. */
export function only(har: Har): HarEntry {
  if (har.log.entries.length !== 1) throw new Error(`expected one entry, got ${har.log.entries.length}`);
  return har.log.entries[0]!;
}

/** Epoch ms of the fixed test clock's origin. */
export const TEST_T0 = T0;
