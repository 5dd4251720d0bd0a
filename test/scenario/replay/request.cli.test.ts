// What the target receives from bb replay is what the original client sent:
// the request line and header names in their recorded case and order,
// nothing added (no Connection the client never sent), Host and
// Content-Length following the target and the body; a body recorded
// decoded goes re-encoded with its recorded Content-Encoding. Real servers
// on loopback, captures recorded through bb's proxy from curl and from a
// Node client, replayed by the real bb binary.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { startRecording } from '../../../scenario/index.js';
import type { Har, HarEntry } from '../../../capture/index.js';
import { runBb } from '../../helpers/cli.js';
import { curl } from '../../helpers/curl.js';
import { rawUpstream, type RawUpstream } from '../../helpers/raw.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

/** A raw TCP server answering each request head with a short 200, keeping every byte it received. */
async function headRecorder(): Promise<RawUpstream> {
  const up = await rawUpstream((socket, _i, received) => {
    let answered = 0;
    socket.on('data', () => {
      const heads = Buffer.concat(received).toString('latin1').split('\r\n\r\n').length - 1;
      for (; answered < heads; answered++) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    });
  });
  closers.push(() => up.close());
  return up;
}

/** The request heads a raw server received, in order (each up to its blank line). */
const headsOf = (up: RawUpstream): string[] =>
  up.received.flatMap((chunks) => Buffer.concat(chunks).toString('latin1').split('\r\n\r\n').slice(0, -1));

/** A server that decodes the request body by its Content-Encoding and echoes it; 400 when it does not decode. */
async function echoServer(): Promise<{ url: string; bodies: string[]; heads: string[] }> {
  const bodies: string[] = [];
  const heads: string[] = [];
  const server = http.createServer((req, res) => {
    // Its own log of each head: the request line and the fields as it parsed them, in case and order.
    heads.push([`${req.method} ${req.url} HTTP/${req.httpVersion}`, ...req.rawHeaders.flatMap((v, i) => (i % 2 === 0 ? [`${v}: ${req.rawHeaders[i + 1]}`] : []))].join('\r\n'));
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const coding = req.headers['content-encoding'];
      let text: string;
      try {
        text = (coding === 'gzip' ? gunzipSync(raw) : coding === 'br' ? brotliDecompressSync(raw) : raw).toString('utf8');
      } catch {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(`the ${coding} body does not decode`);
        return;
      }
      bodies.push(text);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: text, path: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => closeHttpAndWs(server));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, heads };
}

/** Records what `drive(proxyUrl)` does against `target` into NAME.har. */
async function recordCapture(name: string, target: string, drive: (url: string) => Promise<void>): Promise<string> {
  const rec = await startRecording({ target, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
  try {
    await drive(rec.url);
  } finally {
    await rec.close(1000);
  }
  return rec.out;
}

const readHar = async (path: string): Promise<Har> => JSON.parse(await readFile(path, 'utf8'));
const inOrder = (har: Har): HarEntry[] => har.log.entries.sort((a, b) => a._bb!.seq - b._bb!.seq);

/** A HAR of one exchange with the request headers given, as a browser or a hand would write it. */
function handMadeHar(headers: Array<[string, string]>): Har {
  return {
    log: {
      version: '1.2',
      creator: { name: 'hand', version: '1' },
      entries: [{
        startedDateTime: '2026-01-01T00:00:00.000Z',
        time: 1,
        request: { method: 'GET', url: 'http://127.0.0.1:9/hello?x=1', httpVersion: 'HTTP/1.1', cookies: [], queryString: [], headersSize: -1, bodySize: 0, headers: headers.map(([name, value]) => ({ name, value })) },
        response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 2, mimeType: 'text/plain', text: 'ok' }, redirectURL: '', headersSize: -1, bodySize: 2 },
        cache: {},
        timings: { send: 0, wait: 1, receive: 0 },
      }],
    },
  } as unknown as Har;
}

describe('bb replay sends the head as recorded', () => {
  it('a hand-made HAR with mixed-case names reaches the server with those names, in that order, and nothing added', async () => {
    const up = await headRecorder();
    const har = await tmp.write('mixed.har', handMadeHar([
      ['Host', '127.0.0.1:9'],
      ['X-Request-ID', 'req-1'],
      ['Accept-Encoding', 'gzip, br'],
      ['accept', '*/*'],
      ['User-Agent', 'hand/1'],
    ]));
    const run = await runBb(['replay', har, '--target', `http://127.0.0.1:${up.port}`, '--out', tmp.path('mixed-replay.har')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(headsOf(up), [
      `GET /hello?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\nX-Request-ID: req-1\r\nAccept-Encoding: gzip, br\r\naccept: */*\r\nUser-Agent: hand/1`,
    ]);
  });

  it("curl's requests, recorded through bb capture, go out with curl's head: names, order, no Connection", async () => {
    const server = await echoServer();
    const original = await recordCapture('curl', server.url, async (url) => {
      await curl([`${url}/a?q=1`, `${url}/b`, '-H', 'X-Request-ID: abc-123']);
    });
    const recorded = inOrder(await readHar(original)).map((e) => e.request.headers.map((h) => h.name));
    assert.deepEqual(recorded[0], ['Host', 'User-Agent', 'Accept', 'X-Request-ID']);
    const up = await headRecorder();
    const run = await runBb(['replay', original, '--target', `http://127.0.0.1:${up.port}`, '--out', tmp.path('curl-raw.har')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const heads = headsOf(up);
    assert.equal(heads.length, 2);
    for (const [k, head] of heads.entries()) {
      const [line, ...fields] = head.split('\r\n');
      assert.equal(line, `GET ${k === 0 ? '/a?q=1' : '/b'} HTTP/1.1`);
      assert.deepEqual(fields.map((f) => f.slice(0, f.indexOf(':'))), recorded[k]);
      assert.ok(!/^connection:/im.test(head), head);
    }
    assert.match(heads[0]!, new RegExp(`\r\nHost: 127\\.0\\.0\\.1:${up.port}\r\n`));
  });

  it('bb diff of the curl capture and its replay against the same build is MATCH (no request.headers.connection added)', async () => {
    const server = await echoServer();
    const original = await recordCapture('curl-diff', server.url, async (url) => {
      await curl([`${url}/items?page=2`, '-H', 'Accept: application/json']);
      await curl([`${url}/post`, '-H', 'Content-Type: application/json', '--data-binary', '{"name":"x"}']);
    });
    const out = tmp.path('curl-diff-replay.har');
    const run = await runBb(['replay', original, '--target', server.url, '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    // The server's own log: the replay's heads are curl's, as it logged them the first time, Host aside
    // (curl named bb's capture proxy; the replay names the target).
    assert.equal(server.heads.length, 4);
    const hostAside = (head: string) => head.replace(/\r\nHost: [^\r]*/, '\r\nHost: TARGET');
    assert.deepEqual(server.heads.slice(2).map(hostAside), server.heads.slice(0, 2).map(hostAside));
    assert.match(server.heads[2]!, new RegExp(`\r\nHost: ${new URL(server.url).host.replace(/\./g, '\\.')}\r\n`));
    assert.match(server.heads[1]!, /^POST \/post HTTP\/1\.1\r\nHost: 127\.0\.0\.1:\d+\r\nUser-Agent: curl\/[^\r]+\r\nAccept: \*\/\*\r\nContent-Type: application\/json\r\nContent-Length: 12$/);
    const diff = await runBb(['diff', original, out], env);
    assert.doesNotMatch(diff.stdout, /connection/);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });
});

describe('bb replay sends bodies as they crossed', () => {
  it('a gzip and a brotli request body, stored decoded, reach the server decodable', async () => {
    const server = await echoServer();
    const post = (url: string, path: string, coding: 'gzip' | 'br', text: string) =>
      new Promise<number>((resolve, reject) => {
        const body = coding === 'gzip' ? gzipSync(text) : brotliCompressSync(Buffer.from(text));
        const req = http.request(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Encoding': coding, 'Content-Length': body.length } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(body);
      });
    const original = await recordCapture('encoded', server.url, async (url) => {
      assert.equal(await post(url, '/gz', 'gzip', '{"kind":"gzip","n":1}'), 200);
      assert.equal(await post(url, '/br', 'br', '{"kind":"brotli","n":2}'), 200);
    });
    const [gz, br] = inOrder(await readHar(original));
    assert.equal(gz!.request.postData!.text, '{"kind":"gzip","n":1}', 'the capture holds the body decoded');
    assert.equal(br!.request.postData!.text, '{"kind":"brotli","n":2}');
    const fresh = await echoServer();
    const out = tmp.path('encoded-replay.har');
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.deepEqual(fresh.bodies, ['{"kind":"gzip","n":1}', '{"kind":"brotli","n":2}']);
    assert.deepEqual(inOrder(await readHar(out)).map((e) => e.response.status), [200, 200]);
  });
});

describe('bb replay keeps a multipart body’s boundary', () => {
  it("curl's multipart upload reaches the server byte for byte, under the boundary its Content-Type names", async () => {
    const server = await echoServer();
    const file = await tmp.write('note.txt', 'a file of two\nlines\n');
    const original = await recordCapture('multipart', server.url, async (url) => {
      await curl([`${url}/upload`, '-F', 'title=hello', '-F', `doc=@${file};type=text/plain`]);
    });
    const fresh = await echoServer();
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('multipart-replay.har')], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const boundary = /boundary=([^\r]+)/.exec(server.heads[0]!)?.[1];
    assert.ok(boundary, server.heads[0]);
    assert.match(fresh.heads[0]!, new RegExp(`\r\nContent-Type: multipart/form-data; boundary=${boundary}(\r\n|$)`));
    assert.ok(server.bodies[0]!.startsWith(`--${boundary}\r\n`), server.bodies[0]);
    assert.deepEqual(fresh.bodies, server.bodies);
  });
});
