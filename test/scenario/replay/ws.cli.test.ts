// bb replay's WebSocket conversations against servers that do not answer as
// the original did: a bounded wait that runs out is reported and the
// conversation goes on; a refused upgrade is an exchange without a response;
// --ws timing keeps the original gaps instead of waiting, but never sends back
// a value the target issued before it has arrived.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import WebSocket, { WebSocketServer } from 'ws';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startRecording } from '../../../scenario/index.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startReplayService, type ReplayService } from './service.js';
import type { Har } from '../../../capture/index.js';
import { closeHttpAndWs, wsServer } from '../../helpers/servers.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const closers: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

/** A server that takes any WebSocket and says nothing unless spoken to; records what it got and when. */
async function quietServer(): Promise<{ url: string; got: Array<{ text: string; at: number }> }> {
  const server = http.createServer((_req, res) => res.end());
  const wss = new WebSocketServer({ server });
  const got: Array<{ text: string; at: number }> = [];
  wss.on('connection', (ws) => ws.on('message', (d) => got.push({ text: d.toString(), at: performance.now() })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => {
    for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    server.close(() => r());
  }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

describe('bb replay: WebSockets that do not go as recorded', () => {
  let original: string;
  let service: ReplayService;
  before(async () => {
    service = await startReplayService();
    closers.push(() => service.close());
    const rec = await startRecording({ target: service.url, out: tmp.path('ws.har'), label: 'ws', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const ws = new WebSocket(rec.url.replace('http', 'ws') + '/ws');
    const hello = await new Promise<any>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
    // 600 ms between the hello and the subscribe: what --ws timing keeps.
    await new Promise((r) => setTimeout(r, 600));
    ws.send(JSON.stringify({ type: 'subscribe', session: hello.session, cursor: hello.cursor }));
    await new Promise((r) => ws.once('message', r));
    ws.close(1000);
    await new Promise((r) => ws.once('close', r));
    original = await rec.close(1000);
  });

  it('--ws wait: a server that never sends the hello makes the wait run out; it is reported and the message still goes', async () => {
    const quiet = await quietServer();
    const report = tmp.path('quiet.json');
    const run = await runBb(['replay', original, '--target', quiet.url, '--out', tmp.path('quiet.har'), '--wait-ms', '400', '--json', report], env);
    // The wait ended by its own timer: bb finished by itself, runBb's bound did not kill it.
    assert.equal(run.timedOut, false);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /bb replay: #\d+ message \d+: waited for server message 1 \(0 arrived\) \(gave up after \d+ ms\)/);
    assert.equal(quiet.got.length, 1);
    assert.equal(JSON.parse(quiet.got[0]!.text).type, 'subscribe');
    const json = JSON.parse(await readFile(report, 'utf8'));
    // Each wait the recorded conversation had ran out, after the whole --wait-ms (less a timer's granularity).
    const timeouts = json.timeouts as Array<{ what: string; waitedMs: number }>;
    assert.deepEqual(timeouts.map((w) => w.what), ['#1 message 2: waited for server message 1 (0 arrived)', '#1 message 4: waited for server message 2 (0 arrived)']);
    assert.ok(timeouts.every((w) => w.waitedMs >= 350), JSON.stringify(timeouts));
  });

  it('--ws timing keeps the recorded gaps under the default --pace asap: the subscribe goes 600 ms or more after the opening', async () => {
    // A fresh service says hello at once: nothing is waited for, only the gap is kept (a sleep, so a lower bound only).
    const fresh = await startReplayService();
    closers.push(() => fresh.close());
    const run = await runBb(['replay', original, '--target', fresh.url, '--out', tmp.path('timing.har'), '--ws', 'timing'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /waited for/);
    const har = JSON.parse(await readFile(tmp.path('timing.har'), 'utf8'));
    const sent = har.log.entries[0]._webSocketMessages.filter((m: { type: string; opcode: number }) => m.type === 'send' && m.opcode === 1);
    const opened = Date.parse(har.log.entries[0].startedDateTime) / 1000;
    assert.ok(sent[0].time - opened >= 0.5, `sent ${(sent[0].time - opened).toFixed(3)} s after the upgrade`);
  });

  it('--ws timing: a message that sends back a value waits for the target that issues it later than the original did', async () => {
    /** A WebSocket server that says hello with a fresh session after `helloAfterMs`; logs each message's session as its own or stale. */
    const lateHello = async (helloAfterMs: number) => {
      const sessions: string[] = [];
      const { url, close } = await wsServer((ws) => {
        const session = randomBytes(9).toString('base64url');
        const timer = setTimeout(() => ws.send(JSON.stringify({ type: 'hello', session })), helloAfterMs);
        ws.on('close', () => clearTimeout(timer));
        ws.on('message', (d) => sessions.push(JSON.parse(d.toString()).session === session ? 'own' : 'stale'));
      });
      closers.push(close);
      return { url, sessions };
    };
    const first = await lateHello(0);
    const rec = await startRecording({ target: first.url, out: tmp.path('late-hello.har'), label: 'late-hello', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const ws = new WebSocket(rec.url.replace('http', 'ws') + '/ws');
    const hello = await new Promise<{ session: string }>((r) => ws.once('message', (d) => r(JSON.parse(d.toString()))));
    ws.send(JSON.stringify({ type: 'subscribe', session: hello.session }));
    ws.close(1000);
    await new Promise((r) => ws.once('close', r));
    const recorded = await rec.close(1000);
    assert.deepEqual(first.sessions, ['own']);

    // The fresh build says hello 1.5 s after the opening; the original client had sent its subscribe at once.
    const slow = await lateHello(1500);
    const report = tmp.path('late-hello.json');
    const run = await runBb(['replay', recorded, '--target', slow.url, '--out', tmp.path('late-hello-replay.har'), '--ws', 'timing', '--json', report], env);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(slow.sessions, ['own']);
    const json = JSON.parse(await readFile(report, 'utf8'));
    assert.deepEqual(json.timeouts, []);
    assert.deepEqual(json.rewritten.map((r: { from: { path: string } }) => r.from.path), ['ws[0]:$.session~0']);
  });

  it('a server that refuses the upgrade: exit 1, the refusal named with its status', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('no websockets here');
    });
    server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const out = tmp.path('refused.har');
    const run = await runBb(['replay', original, '--target', `http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--out', out], env);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /bb replay: #\d+: the server refused the WebSocket with 403/);
    assert.match(run.stdout, /\(1 of 1 got no response\)/);
    const har = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(har.log.entries[0].response.status, 403);
  });
});

// bb replay of what the REST and JSON conversations do not exercise: binary
// WebSocket messages, client pings and the close code go as recorded; an SSE
// stream is read to its end and a value issued in one of its events is
// followed. A fresh server on loopback makes up its tickets at random and
// counts what it received, frame kind and bytes.
describe('bb replay: binary messages, pings, the close code and SSE', () => {
  const tmp = tempDir();
  const env = { BB_HOME: tmp.bbHome };

  interface FramesServer {
    url: string;
    /** Client WebSocket frames as "text X", "binary HEX", "ping HEX", "close CODE". */
    frames: string[];
    /** Requests as "METHOD path status". */
    log: string[];
    close(): Promise<void>;
  }

  /** A server that issues a ticket inside an SSE event and wants it back on /redeem; /bin is a WebSocket that notes every frame. */
  async function startFramesServer(): Promise<FramesServer> {
    const tickets = new Set<string>();
    const frames: string[] = [];
    const log: string[] = [];
    const server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      res.on('finish', () => log.push(`${req.method} ${url.pathname} ${res.statusCode}`));
      if (url.pathname === '/events') {
        const ticket = `tkt_${randomBytes(8).toString('hex')}`;
        tickets.add(ticket);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write('event: hello\ndata: {"phase":"start"}\n\n');
        // The ticket comes in a later write, so the stream is read past its first chunk.
        setTimeout(() => res.end(`event: ticket\ndata: ${JSON.stringify({ ticket })}\n\n`), 50);
        return;
      }
      if (url.pathname === '/redeem') {
        const ok = tickets.has(url.searchParams.get('ticket') ?? '');
        res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ ok }));
      }
      res.writeHead(404).end();
    });
    const wss = new WebSocketServer({ server, path: '/bin' });
    wss.on('connection', (ws) => {
      ws.on('message', (data, isBinary) => {
        const bytes = data as Buffer;
        frames.push(isBinary ? `binary ${bytes.toString('hex')}` : `text ${bytes.toString()}`);
        ws.send(isBinary ? Buffer.from([0xee, ...bytes]) : `got ${bytes.length}`, { binary: isBinary });
      });
      ws.on('ping', (data) => frames.push(`ping ${data.toString('hex')}`));
      ws.on('close', (code) => frames.push(`close ${code}`));
      ws.send('ready');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      frames,
      log,
      close: () => closeHttpAndWs(server, wss),
    };
  }

  const servers: FramesServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  async function fresh(): Promise<FramesServer> {
    const s = await startFramesServer();
    servers.push(s);
    return s;
  }

  let recorded = '';

  /** Waits until `frames` holds `n` entries (bounded). */
  async function untilFrames(s: FramesServer, n: number): Promise<void> {
    for (let i = 0; i < 500 && s.frames.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  }

  it('the fresh server gets the same frames, kind and bytes, and the ticket issued inside its SSE event', async () => {
    const source = await fresh();
    const rec = await startRecording({ target: source.url, out: tmp.path('frames.har'), label: 'frames', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      // SSE read to its end, then the ticket from its second event sent back.
      const events = await (await fetch(`${rec.url}/events`)).text();
      const ticket = /"ticket":"([^"]+)"/.exec(events)![1]!;
      assert.equal((await fetch(`${rec.url}/redeem?ticket=${ticket}`)).status, 200);
      // A WebSocket: binary, a ping with a payload, text, closed with 4002.
      const ws = new WebSocket(`${rec.url.replace('http', 'ws')}/bin`);
      const inbox: Buffer[] = [];
      const next = () => new Promise<void>((r) => ws.once('message', (d) => (inbox.push(d as Buffer), r())));
      await next();
      ws.send(Buffer.from([0x00, 0x01, 0xfe, 0xff]));
      await next();
      ws.ping(Buffer.from('hb'));
      ws.send('plain text');
      await next();
      ws.close(4002, 'bye');
      await new Promise((r) => ws.once('close', r));
      await untilFrames(source, 4);
    } finally {
      await rec.close(1000);
    }
    recorded = rec.out;
    assert.deepEqual(source.frames, ['binary 0001feff', 'ping 6862', 'text plain text', 'close 4002']);

    const target = await fresh();
    const out = tmp.path('frames-replay.har');
    const run = await runBb(['replay', rec.out, '--target', target.url, '--out', out], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    await untilFrames(target, 4);
    assert.deepEqual(target.frames, source.frames);
    // The ticket the fresh server issued in its SSE event is the one redeemed.
    assert.deepEqual(target.log.filter((l) => !l.startsWith('GET /bin')), ['GET /events 200', 'GET /redeem 200']);
    const har: Har = JSON.parse(await readFile(out, 'utf8'));
    const sse = har.log.entries.find((e) => e.request.url.endsWith('/events'))!;
    const body = sse.response.content.text ?? '';
    assert.match(body, /event: ticket/, 'the stream read to its end');
    const wsEntry = har.log.entries.find((e) => e._webSocketMessages)!;
    const sent = wsEntry._webSocketMessages!.filter((m) => m.type === 'send').map((m) => m.opcode);
    assert.deepEqual(sent.slice(0, 3), [2, 9, 1]);
    assert.equal(wsEntry._bb!.close!.code, 4002);
  });

  it('without --out writes captures/replay-<time>.har under its folder; an existing --out needs --force', async () => {
    assert.ok(recorded, 'the first test recorded the capture');
    const target = await fresh();
    const cwd = tmp.path('default-out');
    await mkdir(cwd, { recursive: true });
    const run = await runBb(['replay', recorded, '--target', target.url], env, { cwd });
    assert.equal(run.code, 0, run.stderr);
    const written = await readdir(join(cwd, 'captures'));
    assert.equal(written.length, 1, written.join(' '));
    assert.match(written[0]!, /^replay-.+\.har$/);
    assert.ok(run.stdout.includes(`→ captures/${written[0]!}`), run.stdout);
    const taken = tmp.path('taken-frames.har');
    await writeFile(taken, 'precious');
    const refused = await runBb(['replay', recorded, '--target', target.url, '--out', taken], env);
    assert.equal(refused.code, 2);
    assert.equal(await readFile(taken, 'utf8'), 'precious');
    const forced = await runBb(['replay', recorded, '--target', target.url, '--out', taken, '--force'], env);
    assert.equal(forced.code, 0, forced.stderr);
    const replayed = JSON.parse(await readFile(taken, 'utf8')) as Har;
    const recordedHar = JSON.parse(await readFile(recorded, 'utf8')) as Har;
    assert.equal(replayed.log.entries.length, recordedHar.log.entries.length, '--force overwrote it with the replay of every recorded exchange');
  });
});

describe('bb replay: a WebSocket the server closed', () => {
  it("waits for the target's own close instead of sending the recorded client's echo of it first: the close is the server's, bb diff is MATCH", async () => {
    /** A server that closes the socket (1000) when told `bye`. */
    const closing = async () => {
      const server = http.createServer((_req, res) => res.end());
      const wss = new WebSocketServer({ server });
      wss.on('connection', (ws) => ws.on('message', (d) => (String(d) === 'bye' ? ws.close(1000, 'done') : ws.send(`echo ${String(d)}`))));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      closers.push(() => closeHttpAndWs(server, wss));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    const rec = await startRecording({ target: await closing(), out: tmp.path('server-close.har'), label: 'server-close', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const ws = new WebSocket(`${rec.url.replace('http', 'ws')}/ws`);
    await new Promise((r) => ws.once('open', r));
    ws.send('hi');
    await new Promise((r) => ws.once('message', r));
    ws.send('bye');
    await new Promise((r) => ws.once('close', r));
    const recorded = await rec.close(1000);
    const out = tmp.path('server-close-replay.har');
    const run = await runBb(['replay', recorded, '--target', await closing(), '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const replayed = JSON.parse(await readFile(out, 'utf8')) as Har;
    assert.deepEqual(replayed.log.entries.map((e) => e._bb?.close?.by), ['server']);
    const diff = await runBb(['diff', recorded, out], env);
    assert.match(diff.stdout, /^MATCH/, diff.stdout + diff.stderr);
  });
});

/** Records one socket through bb in front of `target` into NAME.har: opened (with `headers`), 'hi' and its echo, a close without a status. */
async function recordHi(target: string, name: string, headers: Record<string, string> = {}): Promise<string> {
  const rec = await startRecording({ target, out: tmp.path(`${name}.har`), label: name, bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
  const ws = new WebSocket(`${rec.url.replace('http', 'ws')}/ws`, { headers });
  await new Promise((r) => ws.once('open', r));
  ws.send('hi');
  await new Promise((r) => ws.once('message', r));
  ws.close();
  await new Promise((r) => ws.once('close', r));
  return rec.close(1000);
}

// The upgrade's Host is the target's, as every replayed request's: ws writes the address it connects to, which is
// bb's recording proxy. Against a target named by host name (https://localhost:PORT, a dev server) the replayed
// upgrade carried 127.0.0.1:PORT and paired with no original one (entry missing, entry extra).
describe('bb replay: the upgrade carries the target\'s Host', () => {
  it('a target named localhost sees Host: localhost:PORT on the upgrade too; bb diff is MATCH', async () => {
    const hosts: string[] = [];
    const server = http.createServer((req, res) => (hosts.push(`GET ${req.headers.host}`), res.end('ok')));
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws, req) => (hosts.push(`WS ${req.headers.host}`), ws.on('message', (d) => ws.send(`echo ${String(d)}`))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => closeHttpAndWs(server, wss));
    const target = `http://localhost:${(server.address() as AddressInfo).port}`;
    const recorded = await recordHi(target, 'host', { host: new URL(target).host });
    hosts.length = 0;
    const out = tmp.path('host-replay.har');
    const run = await runBb(['replay', recorded, '--target', target, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(hosts, [`WS ${new URL(target).host}`]);
    const diff = await runBb(['diff', recorded, out], env);
    assert.match(diff.stdout, /^MATCH/, diff.stdout + diff.stderr);
  });
});

// A close frame as the client sent it: with no status at all (an empty payload, RFC 6455 §7.1.5), or a code and a
// reason the HAR holds only in the frame's payload (another tool's export), not as 1000.
describe('bb replay: the client close as recorded', () => {
  /** A server that notes each close it got (code and reason) and answers text with its echo. */
  const noting = async () => {
    const closes: string[] = [];
    const server = http.createServer((_req, res) => res.end());
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => {
      ws.on('message', (d) => ws.send(`echo ${String(d)}`));
      ws.on('close', (code, reason) => closes.push(`${code} ${reason.toString()}`));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => closeHttpAndWs(server, wss));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, closes };
  };
  const until = async (ready: () => boolean) => {
    for (let i = 0; i < 100 && !ready(); i++) await new Promise((r) => setTimeout(r, 20));
  };

  it('a close without a status goes without one: the target sees 1005 as the original did, bb diff is MATCH', async () => {
    const first = await noting();
    const recorded = await recordHi(first.url, 'no-status');
    await until(() => first.closes.length > 0);
    assert.deepEqual(first.closes, ['1005 ']);
    const target = await noting();
    const out = tmp.path('no-status-replay.har');
    const run = await runBb(['replay', recorded, '--target', target.url, '--out', out], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    await until(() => target.closes.length > 0);
    assert.deepEqual(target.closes, ['1005 ']);
    const diff = await runBb(['diff', recorded, out], env);
    assert.match(diff.stdout, /^MATCH/, diff.stdout + diff.stderr);
  });

  it("a close whose code and reason are only in the frame's payload goes with them", async () => {
    const first = await noting();
    const rec = await startRecording({ target: first.url, out: tmp.path('payload-close.har'), label: 'payload-close', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    const ws = new WebSocket(`${rec.url.replace('http', 'ws')}/ws`);
    await new Promise((r) => ws.once('open', r));
    ws.close(4001, 'leaving now');
    await new Promise((r) => ws.once('close', r));
    const recorded = await rec.close(1000);
    // As another tool writes it: the close frame's payload (base64), no decoded code or reason beside it.
    const har = JSON.parse(await readFile(recorded, 'utf8')) as Har;
    const close = har.log.entries[0]!._webSocketMessages!.find((m) => m.type === 'send' && m.opcode === 8)!;
    assert.equal(Buffer.from(close.data, 'base64').readUInt16BE(0), 4001);
    delete close._bb!.code;
    delete close._bb!.reason;
    const other = tmp.path('payload-close-other.har');
    await writeFile(other, JSON.stringify(har));
    const target = await noting();
    const run = await runBb(['replay', other, '--target', target.url, '--out', tmp.path('payload-close-replay.har')], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    await until(() => target.closes.length > 0);
    assert.deepEqual(target.closes, ['4001 leaving now']);
  });
});
