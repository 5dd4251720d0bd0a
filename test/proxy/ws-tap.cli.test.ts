// A WebSocket message larger than the tap keeps, through a real `bb capture`
// between a real `ws` server and client (issue 34 item 7). The peers accept a
// 70 MiB message (ws's limit is 100 MiB); bb must keep its first --body-cap
// bytes marked truncated with its whole size, go on parsing the frames behind
// it, and record the later messages and the close, while its memory stays far
// below the message: it streams the message (counts bytes, keeps the capped
// prefix, inflates with a bounded output) instead of holding it.
//
// Two connections: one sends a 70 MiB binary message client → server (masked,
// in one frame, uncompressed); the other negotiates permessage-deflate and
// sends a 70 MiB text server → client that compresses to well under 1 MiB, so
// only inflating it brings its size back. 70 MiB is past the old 64 MiB limit
// (which turned the message into an error row and dropped the rest), and with
// --body-cap 1MiB a tap that held a message would grow by its 70 MiB on top of
// the ~35 MiB of buffers V8 leaves uncollected while that much streams
// through: bounds on bb's peak RSS growth between the two tell them apart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { startBb } from '../helpers/cli.js';
import { settlesWithin } from '../helpers/bounded.js';
import { tempDir } from '../helpers/tmp.js';
import type { Har, HarEntry, HarWebSocketMessage } from '../../capture/har.js';

const MiB = 1024 * 1024;
const BIG = 70 * MiB;
const CAP = 1 * MiB;

/** A process's resident and peak resident memory, bytes (Linux /proc). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** The messages of an entry in capture order. */
function messagesOf(e: HarEntry): HarWebSocketMessage[] {
  return [...(e._webSocketMessages ?? [])].sort((a, b) => a._bb!.seq - b._bb!.seq);
}

/** What the test asserts of one message: direction, opcode, and a short view of the data. */
function brief(m: HarWebSocketMessage): unknown {
  return { type: m.type, opcode: m.opcode, data: m.data.length > 40 ? `${m.data.length} chars` : m.data, truncated: m._bb?.truncated, size: m._bb?.size };
}

describe('a WebSocket message larger than the tap keeps', () => {
  it('keeps its first --body-cap bytes marked truncated, records what follows and the close, and holds far less than the message', async (t) => {
    const dir = tempDir(t);
    const out = dir.path('big.har');
    const binary = randomBytes(BIG);
    const sentence = 'bb keeps what crossed the wire, in order. ';
    const text = sentence.repeat(Math.ceil(BIG / sentence.length)).slice(0, BIG);

    // The server: on /plain it waits for the client's messages; on /deflate it sends the big text, then two, then closes.
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: true, maxPayload: 100 * MiB });
    await once(server, 'listening');
    t.after(() => server.close());
    const got: Array<number | string> = [];
    server.on('connection', (ws, req) => {
      ws.on('message', (data: Buffer, isBinary) => got.push(isBinary ? data.length : data.toString()));
      if (req.url === '/deflate') {
        ws.send(text);
        ws.send('three');
        ws.send('four');
        ws.close(1000, 'bye');
      }
    });
    const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const bb = startBb(['capture', '--target', target, '--out', out, '--body-cap', '1MiB', '--quiet'], { BB_HOME: dir.bbHome }, { timeoutMs: 120_000 });
    t.after(() => {
      if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
    });
    const [, base] = await bb.waitFor(/: (http:\/\/127\.0\.0\.1:\d+) -> /);
    const wsBase = base!.replace('http:', 'ws:');
    // A first small exchange, so the baseline counts bb's code paths already loaded.
    {
      const warm = new WebSocket(`${wsBase}/warm`, { perMessageDeflate: false });
      await once(warm, 'open');
      warm.send('warm');
      warm.close(1000);
      await once(warm, 'close');
    }
    const before = memoryOf(bb.child.pid!);

    // 1: permessage-deflate, a 70 MiB text server → client. Its wire bytes are
    // few, so bb's memory here is what the tap holds while inflating it.
    const deflated = new WebSocket(`${wsBase}/deflate`, { perMessageDeflate: true, maxPayload: 100 * MiB });
    const received: Array<number | string> = [];
    deflated.on('message', (data: Buffer) => received.push(data.length > 100 ? data.length : data.toString()));
    await settlesWithin(once(deflated, 'close'), 60_000, 'the deflate connection');
    assert.deepEqual(received, [BIG, 'three', 'four'], 'the client got every message');
    const inflated = memoryOf(bb.child.pid!);

    // 2: a 70 MiB binary message client → server, then two small ones, then the client closes.
    const plain = new WebSocket(`${wsBase}/plain`, { perMessageDeflate: false, maxPayload: 100 * MiB });
    await once(plain, 'open');
    plain.send(binary);
    plain.send('one');
    plain.send('two');
    plain.close(1000, 'done');
    await settlesWithin(once(plain, 'close'), 60_000, 'the plain connection');
    assert.deepEqual(got.slice(-3), [BIG, 'one', 'two'], 'the server got every message');
    const after = memoryOf(bb.child.pid!);
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());

    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    const ws = (path: string) => har.log.entries.find((e) => e.request.url.endsWith(path))!;

    const sent = messagesOf(ws('/plain'));
    assert.deepEqual(sent.map(brief), [
      { type: 'send', opcode: 2, data: `${Math.ceil(CAP / 3) * 4} chars`, truncated: CAP, size: BIG },
      { type: 'send', opcode: 1, data: 'one', truncated: undefined, size: undefined },
      { type: 'send', opcode: 1, data: 'two', truncated: undefined, size: undefined },
      { type: 'send', opcode: 8, data: Buffer.from('\x03\xe8done', 'latin1').toString('base64'), truncated: undefined, size: undefined },
      { type: 'receive', opcode: 8, data: Buffer.from('\x03\xe8done', 'latin1').toString('base64'), truncated: undefined, size: undefined },
    ]);
    assert.ok(Buffer.from(sent[0]!.data, 'base64').equals(binary.subarray(0, CAP)), 'the kept bytes are the first bytes of the message');
    assert.deepEqual(ws('/plain')._bb?.close && { code: ws('/plain')._bb!.close!.code, by: ws('/plain')._bb!.close!.by }, { code: 1000, by: 'client' });

    const pushed = messagesOf(ws('/deflate'));
    assert.deepEqual(pushed.map(brief), [
      { type: 'receive', opcode: 1, data: `${CAP} chars`, truncated: CAP, size: BIG },
      { type: 'receive', opcode: 1, data: 'three', truncated: undefined, size: undefined },
      { type: 'receive', opcode: 1, data: 'four', truncated: undefined, size: undefined },
      { type: 'receive', opcode: 8, data: Buffer.from('\x03\xe8bye', 'latin1').toString('base64'), truncated: undefined, size: undefined },
      { type: 'send', opcode: 8, data: Buffer.from('\x03\xe8bye', 'latin1').toString('base64'), truncated: undefined, size: undefined },
    ]);
    assert.equal(pushed[0]!.data, text.slice(0, CAP), 'the kept text is the inflated message\'s first bytes');
    assert.equal(pushed[0]!._bb?.compressed, true);
    assert.equal(ws('/deflate')._bb?.close?.by, 'server');

    // Holding a message would add its 70 MiB to the churn below. Inflating
    // it, bb holds the kept MiB plus zlib's 16 KiB output chunks not yet
    // collected, and relaying it, socket chunks not yet collected: V8 lets
    // external buffers grow by tens of MiB before it collects them (~35 MiB
    // measured either way), so the bounds sit between that churn and the
    // churn plus the message.
    const mib = (n: number): string => `${(n / MiB).toFixed(1)} MiB`;
    t.diagnostic(`bb RSS ${mib(before.rss)} before; peak ${mib(inflated.peak)} after the compressed message, ${mib(after.peak)} after the plain one`);
    assert.ok(inflated.peak - before.rss < BIG * 0.7, `inflating a ${BIG / MiB} MiB message grew bb's peak RSS by ${mib(inflated.peak - before.rss)}`);
    assert.ok(after.peak - before.rss < BIG, `relaying a ${BIG / MiB} MiB message grew bb's peak RSS by ${mib(after.peak - before.rss)}`);
  });
});
