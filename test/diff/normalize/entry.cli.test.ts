// An HTTP/1.1 and an HTTP/2 recording of the same exchange compare equal
// (docs/diff.md "HTTP/1.1 against HTTP/2"): Chrome's `http/2.0` with
// pseudo-headers in `headers`, mitmproxy's `HTTP/2.0` without them. The h2 side
// is the real export from ../shared/fixtures/har/, read in place; the h1 side
// is the same exchange written the way HTTP/1.1 carries it (Host instead of
// :authority, header names in their case, Connection and Keep-Alive).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import type { Har, HarEntry, HarNameValue } from '../../../capture/har.js';
import { runBb } from '../../helpers/cli.js';
import { sharedFixture } from '../../helpers/fixtures.js';
import { tempDir } from '../../helpers/tmp.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { Cleanups } from '../../helpers/cleanups.js';
import { record } from '../../helpers/recording.js';
import { h2Client, h2WebSocketServer, openH2WebSocket, streamBytes } from '../../helpers/h2-peers.js';
import { OP, wsFrame } from '../../helpers/ws-frames.js';
import { WebSocketServer } from 'ws';
import { replayCapture } from '../../../scenario/index.js';
import { diffCaptures, renderText } from '../../../diff/index.js';

async function fixture(name: string): Promise<Har> {
  return JSON.parse((await readFile(sharedFixture(undefined, name)!, 'utf8')).replace(/^\uFEFF/, '')) as Har;
}

const title = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase());

/** The same exchange as HTTP/1.1 would carry it. */
function asHttp1(e: HarEntry): HarEntry {
  const h1 = structuredClone(e);
  const url = new URL(e.request.url);
  const plain = (list: HarNameValue[]) => list.filter((h) => !h.name.startsWith(':')).map((h) => ({ name: title(h.name), value: h.value }));
  h1.request.httpVersion = 'HTTP/1.1';
  h1.response.httpVersion = 'HTTP/1.1';
  h1.request.headers = [{ name: 'Host', value: url.host }, ...plain(e.request.headers), { name: 'Connection', value: 'keep-alive' }];
  h1.response.headers = [...plain(e.response.headers), { name: 'Connection', value: 'keep-alive' }, { name: 'Keep-Alive', value: 'timeout=5' }];
  return h1;
}

function withEntries(har: Har, entries: HarEntry[]): Har {
  return { log: { ...har.log, entries } };
}

describe('HTTP/1.1 and HTTP/2 recordings of the same exchange', () => {
  const t = tempDir();
  async function diff(a: Har, b: Har): Promise<{ code: number; stdout: string }> {
    const n = `${Math.random()}`;
    const r = await runBb(['diff', await t.write(`${n}-h1.har`, a), await t.write(`${n}-h2.har`, b)], { NO_COLOR: '1' });
    return { code: r.code, stdout: r.stdout + r.stderr };
  }

  for (const [name, style] of [['postdata.har', "Chrome's http/2.0 with pseudo-headers"], ['mitmproxy-export.har', "mitmproxy's HTTP/2.0 without them"]] as const) {
    it(`${style} (${name}) matches its HTTP/1.1 twin, and a real difference still shows`, async (t2) => {
      if (!sharedFixture(t2)) return;
      const h2 = await fixture(name);
      const h1 = withEntries(h2, h2.log.entries.map(asHttp1));
      const same = await diff(h1, h2);
      assert.equal(same.code, 0, same.stdout);
      assert.match(same.stdout, /^MATCH/, same.stdout);

      const changed = structuredClone(h2);
      changed.log.entries[0]!.response.headers.push({ name: 'x-new', value: '1' });
      const real = await diff(h1, changed);
      assert.equal(real.code, 1, real.stdout);
      assert.match(real.stdout, /response\.headers\.x-new/, real.stdout);
    });
  }

  it('connection-specific headers still count between two HTTP/1.1 recordings', async (t2) => {
    if (!sharedFixture(t2)) return;
    const h2 = await fixture('postdata.har');
    const a = withEntries(h2, h2.log.entries.map(asHttp1));
    const b = structuredClone(a);
    b.log.entries[0]!.response.headers.push({ name: 'Transfer-Encoding', value: 'chunked' });
    const r = await diff(a, b);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /response\.headers\.transfer-encoding/, r.stdout);
  });
});

// Trailers are fields (docs/diff.md "What is compared"): an HTTP/1.1 chunked
// response's trailer that changed between two recordings of a real server is
// one finding, `response.trailers.x-checksum changed`, and nothing else; the
// same trailer on both sides is no finding. Real node:http server, recorded
// through bb's proxy, compared by the real bb diff.
const cleanups = new Cleanups();
after(() => cleanups.run());

/** A server whose chunked response ends with an `x-checksum` trailer of `checksum`. */
async function trailerServer(checksum: string): Promise<number> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', Trailer: 'x-checksum' });
    res.write('part one ');
    res.addTrailers({ 'x-checksum': checksum });
    res.end('part two');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

/** One GET /file through a recording proxy in front of a server sending `checksum`; the HAR's path. */
async function recordOnce(checksum: string, dir: string): Promise<string> {
  const rec = await record(cleanups, `http://127.0.0.1:${await trailerServer(checksum)}`);
  const res = await fetch(`http://127.0.0.1:${rec.port}/file`);
  assert.equal(await res.text(), 'part one part two');
  const har = await rec.finish();
  assert.deepEqual(har.log.entries[0]!.response._trailers, [{ name: 'x-checksum', value: checksum }], 'the HTTP/1.1 trailer is recorded');
  const file = join(dir, `${checksum}-${Math.random()}.har`);
  await writeFile(file, JSON.stringify(har));
  return file;
}

describe('HTTP/1.1 chunked trailers in bb diff', () => {
  it('a changed trailer is exactly one finding, response.trailers.x-checksum changed', async () => {
    const { dir } = tempDir(cleanups);
    const old = await recordOnce('sha-aaaa', dir);
    const neu = await recordOnce('sha-bbbb', dir);
    const json = await runBb(['diff', old, neu, '--json', '-']);
    assert.equal(json.code, 1, json.stderr);
    const report = JSON.parse(json.stdout) as { findings: Array<{ pattern: string; kind: string; old: unknown; new: unknown }> };
    assert.deepEqual(report.findings.map((f) => [f.pattern, f.kind, f.old, f.new]), [['response.trailers.x-checksum', 'changed', 'sha-aaaa', 'sha-bbbb']]);
    const text = await runBb(['diff', old, neu]);
    assert.match(text.stdout, /response\.trailers\.x-checksum changed "sha-aaaa" → "sha-bbbb"/, text.stdout);
  });

  it('the same trailer on both sides is no finding', async () => {
    const { dir } = tempDir(cleanups);
    const r = await runBb(['diff', await recordOnce('sha-cccc', dir), await recordOnce('sha-cccc', dir)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^MATCH/);
  });
});

// The capture of a WebSocket over HTTP/2 (RFC 8441), replayed against a server that speaks WebSocket over HTTP/1.1
// (ws), diffs as the same conversation: the CONNECT pairs with the GET that upgrades, its 200 with the 101, the
// handshake's key and accept (HTTP/1.1 only, RFC 8441 §5) are not compared across the two; a changed message is a finding.
describe('a WebSocket over HTTP/2 replayed over HTTP/1.1', () => {
  it('bb replay sends its messages as a WebSocket over HTTP/1.1 and bb diff pairs the two: MATCH, then the changed answer', async () => {
    const server = await h2WebSocketServer(cleanups, (f, headers) => wsFrame({ opcode: f.opcode, payload: `${headers[':path']} got ${f.payload}` }));
    const rec = await record(cleanups, server.url);
    const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
    const { stream } = await openH2WebSocket(session, { ':path': '/chat', ':authority': `127.0.0.1:${rec.port}`, 'sec-websocket-version': '13' });
    const answers = streamBytes(stream);
    for (const text of ['one', 'two']) {
      stream.write(wsFrame({ opcode: OP.text, payload: text, mask: true }));
      await new Promise((r) => setTimeout(r, 30));
    }
    stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
    await answers;
    session.close();
    await rec.finish();
    const oldHar = join(rec.dir, 'cap.har');

    // The same service over HTTP/1.1, its 101 with a Date as node:http2 sends one; the second, changed.
    const h1 = async (changed: boolean): Promise<string> => {
      const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
      cleanups.add(() => new Promise<void>((r) => wss.close(() => r())));
      wss.on('headers', (h) => h.push(`Date: ${new Date().toUTCString()}`));
      wss.on('connection', (ws, req) => ws.on('message', (data) => ws.send(`${req.url} got ${data}${changed ? '!' : ''}`)));
      await once(wss, 'listening');
      return `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    };
    const same = join(rec.dir, 'same.har');
    await replayCapture(oldHar, { target: await h1(false), out: same, bbHome: join(rec.dir, 'home') });
    const matched = await diffCaptures(oldHar, same, {});
    assert.equal(matched.exitCode, 0, renderText(matched, { color: false }));
    const other = join(rec.dir, 'changed.har');
    await replayCapture(oldHar, { target: await h1(true), out: other, bbHome: join(rec.dir, 'home') });
    const changed = await diffCaptures(oldHar, other, {});
    assert.equal(changed.exitCode, 1);
    assert.deepEqual([...new Set(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`))], ['real changed ws.messages[].data'], renderText(changed, { color: false }));
  });
});
