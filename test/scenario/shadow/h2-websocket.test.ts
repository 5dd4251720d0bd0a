// A WebSocket over an HTTP/2 stream (RFC 8441) through `bb shadow`: the
// primary answers and its capture records the messages; the mirrors open
// WebSockets over HTTP/1.1 only, so the exchange is counted as skipped with
// its reason and the candidate sees no stream at all.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type http2 from 'node:http2';
import { startShadow } from '../../../scenario/index.js';
import type { Har } from '../../../capture/index.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { h2Client, h2Server } from '../../helpers/h2-peers.js';
import { tempDir } from '../../helpers/tmp.js';
import { OP, parseFrames, wsFrame } from '../../helpers/ws-frames.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const tmp = tempDir();

describe('bb shadow and a WebSocket over HTTP/2', () => {
  it('the primary answers and records it; it is skipped for the mirrors, which see no stream', async () => {
    let candidateStreams = 0;
    // Answers the extended CONNECT with 200 and echoes each frame; a close ends the stream.
    const echo = (stream: http2.ServerHttp2Stream): void => {
      stream.respond({ ':status': 200 });
      stream.on('data', (chunk: Buffer) => {
        for (const f of parseFrames(chunk).frames) {
          if (f.opcode === OP.close) stream.end(wsFrame({ opcode: OP.close, payload: f.payload }));
          else stream.write(wsFrame({ opcode: f.opcode, payload: f.payload }));
        }
      });
    };
    const primary = await h2Server(cleanups, echo, { enableConnectProtocol: true });
    const candidate = await h2Server(cleanups, (stream) => {
      candidateStreams++;
      echo(stream);
    }, { enableConnectProtocol: true });
    const outDir = tmp.path('out');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir, bbHome: tmp.bbHome, mirror: 'all' });
    const { session } = h2Client(shadow.url, cleanups);
    await once(session, 'remoteSettings');
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/live', ':authority': new URL(shadow.url).host }, { endStream: false });
    assert.equal(((await once(stream, 'response')) as [http2.IncomingHttpHeaders])[0][':status'], 200);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.write(wsFrame({ opcode: OP.text, payload: 'ping me', mask: true }));
    stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
    await once(stream, 'close');
    assert.deepEqual(parseFrames(Buffer.concat(chunks)).frames.map((f) => [f.opcode, f.payload.toString('hex')]), [[OP.text, Buffer.from('ping me').toString('hex')], [OP.close, '03e8']]);
    session.close();

    const report = await shadow.close();
    assert.deepEqual(report.totals.skipped, { 'WebSocket over HTTP/2': 1 }, JSON.stringify(report.totals));
    assert.equal(report.totals.mirrored, 0);
    assert.equal(candidateStreams, 0);
    const har = JSON.parse(await readFile(join(outDir, 'primary.har'), 'utf8')) as Har;
    const e = har.log.entries.find((x) => x.request.method === 'CONNECT')!;
    assert.equal(e._resourceType, 'websocket');
    assert.deepEqual((e._webSocketMessages ?? []).filter((m) => m.opcode === 1).map((m) => [m.type, m.data]), [['send', 'ping me'], ['receive', 'ping me']]);
  });
});
