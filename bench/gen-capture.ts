// Generates big bb-shaped captures for the diff benchmark: realistic JSON
// bodies (ISO timestamps, uuids, nested arrays), WebSocket connections with
// thousands of messages, written entry by entry so any size fits.
//
// An "old" and a "new" capture from the same seed differ in every timestamp
// and uuid (ids drawn from a pool of 2,000 per side, a fresh one per body) (which normalizing must absorb) and, in the new one, in one field
// of every `realEvery`-th entry (real differences the diff must report).
//
//   node --import tsx bench/gen-capture.ts OUT.har ENTRIES old|new
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { mulberry32 } from '../core/index.js';

/** What to generate. */
export interface GenOptions {
  /** HTTP + WebSocket entries in total. */
  entries: number;
  /** Which side: "new" carries the real differences. */
  variant: 'old' | 'new';
  /** One entry in this many is a WebSocket connection (default 1,000). */
  wsEvery?: number;
  /** Messages per WebSocket connection (default 2,000). */
  wsMessages?: number;
  /** One entry in this many differs for real in the new side (default 500). */
  realEvery?: number;
  /** Items per body's nested array (default 6: about 2 KB per entry). */
  items?: number;
}

/** A small deterministic PRNG (mulberry32). */
export const rng = mulberry32;

function uuidFrom(r: () => number): string {
  const h = () => Math.floor(r() * 0x100000000).toString(16).padStart(8, '0');
  const s = h() + h() + h() + h();
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20, 32)}`;
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/** Writes one capture; resolves with its size in bytes. */
export async function generateCapture(path: string, opts: GenOptions): Promise<number> {
  const wsEvery = opts.wsEvery ?? 1000;
  const wsMessages = opts.wsMessages ?? 2000;
  const realEvery = opts.realEvery ?? 500;
  const items = opts.items ?? 6;
  // Shared structure: the same seed on both sides; volatile values from a side-specific stream.
  const shape = rng(42);
  const volatile = rng(opts.variant === 'old' ? 1 : 2);
  const out = createWriteStream(path, { mode: 0o600 });
  let bytes = 0;
  const write = async (s: string) => {
    bytes += Buffer.byteLength(s);
    if (!out.write(s)) await once(out, 'drain');
  };
  let clock = Date.parse('2026-01-01T00:00:00Z') + (opts.variant === 'old' ? 0 : 3_600_000);
  const iso = () => new Date((clock += Math.floor(volatile() * 50))).toISOString();
  let seq = 0;
  // Services hand out the same ids again and again (products, users): a pool per side, picked by shared slots.
  const pool = Array.from({ length: 2000 }, () => uuidFrom(volatile));
  const pick = () => pool[Math.floor(shape() * pool.length)]!;
  await write(`{"log":{"version":"1.2","creator":{"name":"bb","version":"0.1.0"},"pages":[],"entries":[\n`);
  for (let n = 0; n < opts.entries; n++) {
    const isWs = (n + 1) % wsEvery === 0;
    const real = opts.variant === 'new' && (n + 1) % realEvery === 0;
    const started = iso();
    seq++;
    const headers = (list: Array<[string, string]>) => JSON.stringify(list.map(([name, value]) => ({ name, value })));
    let entry: Record<string, unknown>;
    if (isWs) {
      const messages = [];
      const session = `session_${uuidFrom(volatile)}`;
      for (let m = 0; m < wsMessages; m++) {
        const send = m % 4 === 0;
        const value = Math.floor(shape() * 1000);
        const data = send
          ? { type: 'subscribe', channel: WORDS[m % WORDS.length], id: m }
          : { type: 'event', seq: m, at: iso(), session, value: real && m === wsMessages - 1 ? 'changed' : value };
        messages.push({ type: send ? 'send' : 'receive', time: clock / 1000, opcode: 1, data: JSON.stringify(data), _bb: { seq: ++seq } });
      }
      entry = {
        startedDateTime: started, time: 5,
        request: { method: 'GET', url: `http://127.0.0.1:3001/v1/stream?c=${n}`, httpVersion: 'HTTP/1.1', cookies: [], headers: JSON.parse(headers([['Host', '127.0.0.1:3001'], ['Upgrade', 'websocket'], ['Sec-WebSocket-Key', uuidFrom(volatile)]])), queryString: [{ name: 'c', value: String(n) }], headersSize: -1, bodySize: 0 },
        response: { status: 101, statusText: 'Switching Protocols', httpVersion: 'HTTP/1.1', cookies: [], headers: JSON.parse(headers([['Upgrade', 'websocket'], ['Sec-WebSocket-Accept', uuidFrom(volatile)]])), content: { size: 0, mimeType: 'x-unknown' }, redirectURL: '', headersSize: -1, bodySize: 0 },
        cache: {}, timings: { send: 0, wait: 1, receive: 0 }, connection: `c${n}`,
        _resourceType: 'websocket', _webSocketMessages: messages,
        _bb: { seq, seqEnd: ++seq, close: { code: 1000, reason: '', by: 'client', time: clock / 1000 } },
      };
    } else {
      const route = n % 7;
      const body = {
        id: uuidFrom(volatile),
        created_at: iso(),
        owner: { id: pick(), name: WORDS[route]!, roles: ['reader', route % 2 ? 'writer' : 'admin'] },
        items: Array.from({ length: items }, (_, k) => ({
          id: pick(),
          name: `${WORDS[(n + k) % WORDS.length]} ${k}`,
          price: Math.round(shape() * 10000) / 100,
          tags: [WORDS[k % WORDS.length], WORDS[(k + 3) % WORDS.length]],
          updatedAt: iso(),
        })),
        total: items,
        status: real ? 'degraded' : 'ok',
        note: `served at ${iso()} by 127.0.0.1:${3000 + Math.floor(volatile() * 1000)}`,
      };
      const text = JSON.stringify(body);
      entry = {
        startedDateTime: started, time: 3,
        request: { method: route === 3 ? 'POST' : 'GET', url: `http://127.0.0.1:3001/v1/route${route}/items?page=${n % 10}`, httpVersion: 'HTTP/1.1', cookies: [], headers: JSON.parse(headers([['Host', '127.0.0.1:3001'], ['Accept', 'application/json'], ['X-Request-Id', uuidFrom(volatile)]])), queryString: [{ name: 'page', value: String(n % 10) }], headersSize: -1, bodySize: 0 },
        response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: JSON.parse(headers([['Content-Type', 'application/json'], ['Content-Length', String(Buffer.byteLength(text))], ['Date', new Date(clock).toUTCString()]])), content: { size: Buffer.byteLength(text), mimeType: 'application/json', text }, redirectURL: '', headersSize: -1, bodySize: Buffer.byteLength(text) },
        cache: {}, timings: { send: 1, wait: 1, receive: 1 }, connection: `c${n}`,
        _bb: { seq, seqEnd: ++seq },
      };
    }
    await write(`${n ? ',\n' : ''}${JSON.stringify(entry)}`);
  }
  const end = new Date(clock).toISOString();
  await write(`\n],"_bb":{"format":1,"label":"${opts.variant}","target":"http://127.0.0.1:3001","listen":"http://127.0.0.1:8080","startedDateTime":"2026-01-01T00:00:00.000Z","endedDateTime":"${end}","complete":true,"counts":{"entries":${opts.entries},"webSocketMessages":0}}}}\n`);
  out.end();
  await once(out, 'finish');
  return bytes;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [path, count, variant] = process.argv.slice(2);
  if (!path || !count || (variant !== 'old' && variant !== 'new')) {
    console.error('usage: node --import tsx bench/gen-capture.ts OUT.har ENTRIES old|new');
    process.exit(2);
  }
  const size = await generateCapture(path, { entries: Number(count), variant });
  console.log(`${path}: ${count} entries, ${(size / 1048576).toFixed(1)} MB`);
}
