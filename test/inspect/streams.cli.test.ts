// SSE events and gRPC messages as messages of their stream, through real
// captures: an SSE server the client hangs up on after three events (with a
// plain GET crossing in between), and a real gRPC call over h2c. `bb frames`
// (text, --timeline, --json, --html) lists them; a stream's response row sits where
// its head arrived; `bb show` marks the client's hang-up apart from bb's own
// error responses (`!`).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startCapture } from '../../index.js';
import { runBb } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { driveItems, itemsServer } from '../helpers/grpc-items.js';
import { tempDir } from '../helpers/tmp.js';

const cleanups = new Cleanups();
after(() => cleanups.run());
const dir = tempDir(cleanups).dir;
const bb = async (...args: string[]): Promise<string> => {
  const r = await runBb(args, { NO_COLOR: '1', COLUMNS: '160' });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
};

/** Records: GET /events (three events, then the client hangs up), a GET /plain between events 1 and 2. */
async function recordSse(): Promise<string> {
  let push: ((data: string) => void) | undefined;
  const server = http.createServer((req, res) => {
    if (req.url === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write(': hello\n\n');
      push = (data) => res.write(data);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('plain');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => { server.closeAllConnections(); return new Promise((r) => server.close(r)); });
  const cap = await startCapture({ target: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, label: 'sse', out: join(dir, 'sse.har'), bbHome: join(dir, 'home') });
  const events: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const req = http.get(`${cap.url}/events`, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        const parts = buf.split('\n\n');
        buf = parts.pop()!;
        for (const p of parts) {
          if (!p.startsWith('data:') && !p.startsWith('event:')) continue;
          events.push(p);
          if (events.length === 1) {
            void fetch(`${cap.url}/plain`).then((r) => r.text()).then(() => push!('event: tick\nid: 2\ndata: {"n":2}\n\n'));
          } else if (events.length === 2) push!('data: <script>alert(1)</script>\n\n');
          else if (events.length === 3) { req.destroy(); resolve(); }
        }
      });
      push!('data: {"n":1}\n\n');
    });
    req.on('error', (err) => (events.length >= 3 ? resolve() : reject(err)));
  });
  // The capture closes once bb has the hang-up: the stream's row ended (a close before it would end the stream itself).
  const live = cap.live();
  await new Promise<void>((resolve) => {
    const ended = (): boolean => live.rows().some((r) => r.kind === 'sse' && r.endedAt !== undefined);
    if (ended()) return resolve();
    const stop = live.on(() => {
      if (!ended()) return;
      stop();
      resolve();
    });
  });
  return cap.close(500);
}

async function recordGrpc(): Promise<string> {
  const port = await itemsServer(cleanups, { lookupStatus: 5 });
  const cap = await startCapture({ target: `http://127.0.0.1:${port}`, label: 'grpc', out: join(dir, 'grpc.har'), bbHome: join(dir, 'home') });
  await driveItems(Number(new URL(cap.url).port));
  return cap.close(500);
}

describe('SSE events and gRPC messages as messages of their stream', () => {
  let sse = '';
  let grpc = '';
  before(async () => {
    sse = await recordSse();
    grpc = await recordGrpc();
  });

  it('bb frames lists an SSE stream with its events, and says the client ended it', async () => {
    const text = (await bb('frames', sse)).split('\n');
    assert.match(text[0]!, /^sse stream #1 {2}http:\/\/127\.0\.0\.1:\d+\/events {2}\(3 events; ended by the client\)$/, text.join('\n'));
    const lines = text.slice(1).filter(Boolean);
    assert.equal(lines.length, 3, text.join('\n'));
    assert.match(lines[0]!, /^\s+- +\+\d\.\d{3}s ← sse +7B {2}\{"n":1\}$/);
    assert.match(lines[1]!, /← sse +7B {2}event tick id 2: \{"n":2\}$/);
    // The last event id carries over to later events (the HTML standard's "last event ID buffer").
    assert.match(lines[2]!, /← sse +25B {2}message id 2: <script>alert\(1\)<\/script>$/);
    const json = JSON.parse(await bb('frames', sse, '--json')) as { connections: Array<{ id: string; sse?: boolean; messages: Array<{ type: string; data: string; _bb: { sse: { event: string; id: string } } }> }> };
    assert.deepEqual(json.connections.map((c) => c.id), ['#1']);
    assert.deepEqual(json.connections[0]!.messages.map((m) => [m.type, m.data, m._bb.sse.event]), [
      ['receive', '{"n":1}', 'message'], ['receive', '{"n":2}', 'tick'], ['receive', '<script>alert(1)</script>', 'message'],
    ]);
  });

  it('bb frames --html draws the SSE stream as a lane of its own, each event a row of it', async () => {
    const html = await bb('frames', sse, '--html', '-');
    const block = (id: string): unknown => JSON.parse(new RegExp(`<script type="application/json" id="${id}">([^<]*)</script>`).exec(html)![1]!);
    const data = block('bb-data') as { lanes: Array<{ id: string; name: string; where: string; rows: number }>; rows: unknown[][] };
    assert.deepEqual(data.lanes.map((l) => [l.id, l.name, l.where.replace(/:\d+/, ':PORT'), l.rows]), [['#1', 'sse stream #1', '127.0.0.1:PORT /events', 3]]);
    // Each event a row of lane 0, from the server (1), labelled as the text view previews it (event name and id).
    assert.deepEqual(data.rows.map((r) => [r[0], r[1], r[6]]), [
      [0, 1, 'sse 7B {"n":1}'], [0, 1, 'sse 7B event tick id 2: {"n":2}'], [0, 1, 'sse 25B message id 2: <script>alert(1)</script>'],
    ]);
    assert.deepEqual((block('bb-payloads') as unknown[][]).map((p) => p[1]), ['{"n":1}', '{"n":2}', '<script>alert(1)</script>']);
    assert.ok(!html.includes('<script>alert'), 'the hostile event is escaped in the page');
    // The page's header calls it what it is.
    assert.equal(/<span id="summary">([^<]*)<\/span>/.exec(html)?.[1], '3 rows · 1 of 1 stream');
  });

  it('--timeline puts the stream response where its head arrived, events in order, the GET between them', async () => {
    const lines = (await bb('frames', sse, '--timeline')).split('\n').filter(Boolean);
    const kinds = lines.map((l) => (/▶ http GET \S+\/events/.test(l) ? 'req' : /◀ http 200× GET \S+\/events/.test(l) ? 'head' : /▶ http GET \S+\/plain/.test(l) ? 'plain' : /◀ http 200 GET \S+\/plain/.test(l) ? 'plain-res' : / sse /.test(l) ? 'event' : l));
    assert.deepEqual(kinds, ['req', 'head', 'event', 'plain', 'plain-res', 'event', 'event'], lines.join('\n'));
    const json = JSON.parse(await bb('frames', sse, '--timeline', '--json')) as { events: Array<{ kind: string; connection?: string }> };
    assert.deepEqual(json.events.filter((e) => e.kind === 'ws').map((e) => e.connection), ['#1', '#1', '#1']);
  });

  it('bb show marks the client hang-up with ×, not with bb\'s own error mark', async () => {
    const rows = (await bb('show', sse)).split('\n');
    const events = rows.find((l) => l.includes('/events'))!;
    assert.match(events, /\s200×\s/, events);
    assert.doesNotMatch(events, /200!/);
    assert.match(events, /\(aborted by client\)$/);
    const json = JSON.parse(await bb('show', sse, '--json')) as { entries: Array<{ url: string; error?: string; errorBy?: string }> };
    assert.deepEqual(json.entries.map((e) => [e.url.split('/').pop(), e.errorBy]), [['events', 'client'], ['plain', undefined]]);
  });

  it('a gRPC call: its response row sits before the messages it answered with', async () => {
    const calls = JSON.parse(await bb('frames', grpc, '--json')) as { connections: Array<{ id: string; url: string }> };
    const id = calls.connections.find((c) => c.url.endsWith('/Store'))!.id;
    const lines = (await bb('frames', grpc, '--timeline')).split('\n').filter(Boolean);
    const mine = (l: string, arrow: string) => l.trim().split(/\s+/)[1] === id && l.includes(`${arrow} grpc`);
    const store = lines.map((l) => (/▶ http POST \S+Store/.test(l) ? 'req' : /◀ http 200 POST \S+Store/.test(l) ? 'head' : mine(l, '→') ? 'send' : mine(l, '←') ? 'recv' : '')).filter(Boolean);
    assert.deepEqual(store, ['req', 'send', 'head', 'recv'], lines.join('\n'));
  });
});
