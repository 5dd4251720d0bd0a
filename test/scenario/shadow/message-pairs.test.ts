// A value a server issues in a WebSocket message and its client sends back
// (docs/shadow.md "Sessions: each target's own ids and cookies"): a help desk
// hands each connection a ticket numbered by each build from its own start
// (1000, 5000, 9000: plain numbers, which bind only by their use), the client
// acknowledges it on the socket and later reads it over HTTP. Each target
// must get its own ticket back (the relay learns counterparts from server
// messages too, not only from HTTP answers), and the live comparison must
// bind a ticket issued on a socket compared in one batch and read in a later
// one, as `bb diff` of the captures binds it: the new build's changed field
// is a regression, not noise hidden by every mirror's "unknown ticket". An
// event stream that hands out a ticket and stays open is bound event by
// event, and a read of the ticket waits until the target's stream said it;
// that read, which ends before the stream, binds in the comparison too (by
// the times in bb diff, by what the relay learned from the events live).
// (scenario/shadow/message-pairs.ts pairs streams' messages and holds the
// read-after-write waits; mirror-ws.ts and answer-wait.ts feed them.)
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, constants, createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { Client } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { startShadow, type Shadow } from '../../../scenario/index.js';
import { Counterparts, diffCaptures } from '../../../diff/index.js';
import { OpenStreams } from '../../../scenario/shadow/message-pairs.js';
import { tempDir } from '../../helpers/tmp.js';
import { compared, findingKeys, offlineKeys } from './compared.js';

const tmp = tempDir();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

/**
 * A help desk: a socket issues a numbered ticket, acknowledged on the socket, read over HTTP; the new build's desk
 * and state differ. `reads`: each ticket read, with its status. With `h2c` it speaks HTTP/2 over cleartext (no desk).
 */
async function startDesk(build: 'old' | 'new', firstTicket: number, reads: string[] = [], h2c = false, bigFirst = false): Promise<string> {
  let next = firstTicket;
  const tickets = new Set<number>();
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    if (req.url === '/queue') {
      // An event stream that hands out a ticket, then stays open until the client leaves.
      const ticket = next++;
      tickets.add(ticket);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // `bigFirst`: an event past what binding reads comes first (its data one line of 4 MiB, a piece at a time).
      if (bigFirst) for (let i = 0; i < 64; i++) res.write(i === 0 ? `data: ${'x'.repeat(65536)}` : 'x'.repeat(65536));
      res.write(`${bigFirst ? '\n\n' : ''}data: ${JSON.stringify({ ticket })}\n\n`);
      return;
    }
    if (req.url === '/tickets' && req.method === 'POST') {
      req.resume();
      const ticket = next++;
      tickets.add(ticket);
      res.writeHead(201, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ ticket }));
    }
    const m = /^\/tickets\/(\d+)$/.exec(req.url ?? '');
    const known = m && tickets.has(Number(m[1]));
    if (m) reads.push(`${m[1]} ${known ? 200 : 404}`);
    res.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(known ? { ticket: Number(m[1]), state: build === 'new' ? 'closed' : 'open' } : { error: 'no such ticket' }));
  };
  if (h2c) {
    const h2 = createH2cServer(handle);
    const sessions = new Set<ServerHttp2Session>();
    h2.on('session', (s) => (sessions.add(s), s.once('close', () => sessions.delete(s))));
    await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
    closers.push(async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((r) => h2.close(() => r()));
    });
    return `http://127.0.0.1:${(h2.address() as { port: number }).port}`;
  }
  const server: Server = createServer(handle);
  const wss = new WebSocketServer({ server, path: '/desk' });
  wss.on('connection', (ws) => {
    const ticket = next++;
    tickets.add(ticket);
    ws.send(JSON.stringify({ ticket }));
    ws.on('message', (data) => {
      const ack = (JSON.parse(data.toString()) as { ack?: number }).ack;
      ws.send(JSON.stringify(ack !== undefined && tickets.has(ack) ? { acked: ack, desk: build === 'new' ? 'B' : 'A' } : { error: 'unknown ticket' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Reads the ticket over HTTP through the shadow (found: 200), then waits until the run has compared that read. */
async function readTicket(shadow: Shadow, ticket: number): Promise<void> {
  const c = new Client(shadow.url);
  const read = await c.request({ method: 'GET', path: `/tickets/${ticket}` });
  assert.equal(read.statusCode, 200);
  await read.body.text();
  await c.close();
  await compared(shadow, 1);
}

/**
 * Ends the run and checks what a ticket read while its stream or socket went on must give: no error, each
 * target read its own ticket and found it, the new build's changed state the one finding, live = bb diff of the
 * captures in `out`.
 */
async function ownTicketsRead(shadow: Shadow, reads: Record<'primary' | 'candidate' | 'secondary', string[]>, out: string): Promise<void> {
  const report = await shadow.close();
  assert.equal(report.totals.errors, 0);
  assert.deepEqual(reads, { primary: ['1000 200'], candidate: ['5000 200'], secondary: ['9000 200'] });
  assert.deepEqual(findingKeys(report), ['real changed response.body.state']);
  const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
  assert.deepEqual(offlineKeys(offline), findingKeys(report));
}

/** Opens the desk, acknowledges its ticket, closes; resolves to the ticket. */
async function visitDesk(url: string): Promise<number> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/desk`);
  const messages: string[] = [];
  const next = () => new Promise<Record<string, unknown>>((resolve, reject) => {
    ws.once('message', (d) => {
      messages.push(d.toString());
      resolve(JSON.parse(d.toString()) as Record<string, unknown>);
    });
    ws.once('error', reject);
  });
  const issued = await next();
  const ticket = issued.ticket as number;
  ws.send(JSON.stringify({ ack: ticket }));
  assert.deepEqual(await next(), { acked: ticket, desk: 'A' });
  const closed = new Promise((r) => ws.once('close', r));
  ws.close(1000);
  await closed;
  return ticket;
}

describe('bb shadow: values a server issues in WebSocket messages and events', () => {
  it('each target gets its own back, and a read in a later batch binds, as bb diff of the captures binds it', async () => {
    const [primary, candidate, secondary] = [await startDesk('old', 1000), await startDesk('new', 5000), await startDesk('old', 9000)];
    const out = tmp.path('desk');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100 });
    const ticket = await visitDesk(shadow.url);
    // The conversation is compared (its batch is done) before the ticket is read.
    await compared(shadow, 1);
    const c = new Client(shadow.url);
    const res = await c.request({ method: 'GET', path: `/tickets/${ticket}` });
    assert.equal(res.statusCode, 200);
    await res.body.text();
    await c.close();
    const report = await shadow.close();

    assert.equal(report.totals.errors, 0);
    const desk = report.routes['WS /desk'];
    assert.deepEqual(desk && { regressions: desk.regressions, noise: desk.noise }, { regressions: 1, noise: 0 }, JSON.stringify(report.findings));
    const read = report.routes['GET /tickets/{id}'];
    assert.deepEqual(read && { regressions: read.regressions, noise: read.noise }, { regressions: 1, noise: 0 }, JSON.stringify(report.routes));

    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
  });

  // A ticket from an event stream still open, read on another connection, and the read compared before the
  // stream ends (so in an earlier batch than the stream's, and before it in the captures' order).
  // Both ways a run's verdict is reached: the live worker's, and a fresh worker's reading the journals whole at the end.
  // And after an event longer than binding reads (BIND_READ_BYTES), counted, not held (an event that never ends took
  // bb shadow past V8's heap: 800 MB of one data line): the ticket after it is still each target's own.
  for (const [drain, bigFirst] of [['live', false], ['whole', false], ['live', true]] as const)
  it(`a ticket an open event stream issued is each target's own when read while the stream goes on (${drain} comparison${bigFirst ? ', after an event too long to read' : ''})`, async () => {
    const reads = { primary: [] as string[], candidate: [] as string[], secondary: [] as string[] };
    const [primary, candidate, secondary] = [
      await startDesk('old', 1000, reads.primary, false, bigFirst), await startDesk('new', 5000, reads.candidate, false, bigFirst), await startDesk('old', 9000, reads.secondary, false, bigFirst),
    ];
    const out = tmp.path(`queue-${drain}${bigFirst ? '-big' : ''}`);
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100, drain });
    const stream = new Client(shadow.url);
    const ac = new AbortController();
    const res = await stream.request({ method: 'GET', path: '/queue', signal: ac.signal });
    res.body.on('error', () => {});
    let text = '';
    const ticket = await new Promise<number>((resolve) => {
      res.body.on('data', (d: Buffer) => {
        text += d.toString();
        const m = /data: (\{"ticket":\d+\})\n\n/.exec(text);
        if (m) resolve((JSON.parse(m[1]!) as { ticket: number }).ticket);
      });
    });
    await readTicket(shadow, ticket);
    ac.abort();
    await stream.destroy();
    const report = await shadow.close();
    assert.equal(report.totals.errors, 0);
    // The relay bound the event's ticket as it crossed: each target read its own, and found it.
    assert.deepEqual(reads, { primary: ['1000 200'], candidate: ['5000 200'], secondary: ['9000 200'] });
    // The read ended (and was compared) before the stream did: bb diff of the captures binds its ticket by the times
    // (the event's before the read's start), and the live comparison by what the relay learned from the events as
    // they crossed. So the read pairs and its changed state is the one regression; the events compare equal.
    const readRoute = report.routes['GET /tickets/{id}'];
    assert.deepEqual(readRoute && { regressions: readRoute.regressions, noise: readRoute.noise }, { regressions: 1, noise: 0 }, JSON.stringify(report.routes));
    assert.deepEqual(findingKeys(report), ['real changed response.body.state']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
  });

  // The same over h2: the stream and the read are streams of one connection. The relay bound an h2 event stream's
  // values only when the stream ended, so the read reached each mirror with the primary's ticket (404).
  it("a ticket an open h2 event stream issued is each target's own when read on the same connection while the stream goes on", async () => {
    const reads = { primary: [] as string[], candidate: [] as string[], secondary: [] as string[] };
    const [primary, candidate, secondary] = [await startDesk('old', 1000, reads.primary, true), await startDesk('new', 5000, reads.candidate, true), await startDesk('old', 9000, reads.secondary, true)];
    const out = tmp.path('queue-h2');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100 });
    const session = connect(shadow.url);
    const queue = session.request({ ':method': 'GET', ':path': '/queue' });
    const first = await new Promise<string>((resolve) => queue.once('data', (d: Buffer) => resolve(d.toString())));
    const ticket = (JSON.parse(first.replace(/^data: /, '')) as { ticket: number }).ticket;
    const read = session.request({ ':method': 'GET', ':path': `/tickets/${ticket}` });
    const [status] = await Promise.all([new Promise<number>((r) => read.once('response', (h) => r(Number(h[':status'])))), new Promise((r) => (read.resume(), read.once('end', r)))]);
    assert.equal(status, 200);
    await compared(shadow, 1);
    queue.close(constants.NGHTTP2_CANCEL);
    await new Promise<void>((r) => session.close(() => r()));
    await ownTicketsRead(shadow, reads, out);
  });

  // The same with a socket: a WebSocket entry's own time is its handshake's (the conversation's messages and close
  // carry theirs), so bb diff must hold the socket by its messages and close, not by the handshake's end.
  it("a ticket an open socket issued is each target's own when read while the socket goes on; live = bb diff of the captures", async () => {
    const reads = { primary: [] as string[], candidate: [] as string[], secondary: [] as string[] };
    const [primary, candidate, secondary] = [await startDesk('old', 1000, reads.primary), await startDesk('new', 5000, reads.candidate), await startDesk('old', 9000, reads.secondary)];
    const out = tmp.path('desk-open');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100 });
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/desk`);
    const { ticket } = await new Promise<{ ticket: number }>((resolve, reject) => (ws.once('message', (d) => resolve(JSON.parse(d.toString()) as { ticket: number })), ws.once('error', reject)));
    await readTicket(shadow, ticket);
    const closed = new Promise((r) => ws.once('close', r));
    ws.close(1000);
    await closed;
    await ownTicketsRead(shadow, reads, out);
  });

  // A value an HTTP answer issued, sent back at once on another connection (here the open socket), can reach a
  // target before that target's own answer to the issuing request came back: the message waits for it
  // (answer-wait.ts), else every mirror says "unknown ticket" and the new build's changed desk hides as noise.
  it('a ticket an HTTP answer issued, acknowledged at once on an open socket, is each target\'s own', async () => {
    const [primary, candidate, secondary] = [await startDesk('old', 1000), await startDesk('new', 5000), await startDesk('old', 9000)];
    const out = tmp.path('reverse');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 100, mirror: 'all' });
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/desk`);
    const next = () => new Promise<Record<string, unknown>>((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()) as Record<string, unknown>)));
    await next();
    const c = new Client(shadow.url);
    const res = await c.request({ method: 'POST', path: '/tickets', body: '{}' });
    const ticket = ((await res.body.json()) as { ticket: number }).ticket;
    await c.close();
    ws.send(JSON.stringify({ ack: ticket }));
    assert.deepEqual(await next(), { acked: ticket, desk: 'A' });
    const closed = new Promise((r) => ws.once('close', r));
    ws.close(1000);
    await closed;
    const report = await shadow.close();
    const desk = report.routes['WS /desk'];
    assert.deepEqual(desk && { regressions: desk.regressions, noise: desk.noise }, { regressions: 1, noise: 0 }, JSON.stringify(report.findings));
  });
});

// A stream whose target lags (a feed on another clock, a candidate that pushes less) holds back only the
// requests that carry a value one of the primary's messages issued and the target has not said yet.
describe('bb shadow: a lagging stream holds back no request that does not carry its values', () => {
  it('requests on other connections reach the target while its copy of an open event stream says nothing', async () => {
    // The primary's feed hands out a ticket at once; the candidate's says nothing until the client leaves.
    const hits: string[] = [];
    const feed = async (speaks: boolean) => {
      const server = createServer((req, res) => {
        if (!speaks) hits.push(req.url ?? '');
        if (req.url === '/feed') {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          if (speaks) res.write(`data: ${JSON.stringify({ ticket: 4711 })}\n\n`);
          else res.write(': quiet\n\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      closers.push(async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      });
      return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    };
    const [primary, candidate] = [await feed(true), await feed(false)];
    const shadow = await startShadow({ primary, candidate, outDir: tmp.path('lagging'), bbHome: tmp.bbHome });
    const stream = new Client(shadow.url);
    const ac = new AbortController();
    const res = await stream.request({ method: 'GET', path: '/feed', signal: ac.signal });
    res.body.on('error', () => {});
    await new Promise<void>((resolve) => res.body.once('data', () => resolve()));
    // The stream is open and the candidate's copy lags by one event: 20 requests that carry no ticket.
    const c = new Client(shadow.url);
    for (let i = 0; i < 20; i++) {
      const r = await c.request({ method: 'GET', path: `/health?n=${i}` });
      await r.body.text();
    }
    // Each would wait a second for the candidate's event if every request waited for lagging streams: 20 s.
    for (let i = 0; i < 100 && hits.filter((h) => h.startsWith('/health')).length < 20; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(hits.filter((h) => h.startsWith('/health')).length, 20, 'the candidate got every request while the stream was open');
    await c.close();
    ac.abort();
    await stream.destroy();
    await shadow.close();
  });
});

// What one target's open streams keep of messages waiting for their pair is bounded in bytes across its streams
// (MAX_PENDING_BYTES): a target lagging on many conversations whose primary says long messages held up to
// 256 × 256 KiB for each before. Past the budget the longest-open stream's oldest go first; what is kept still binds,
// and a stream's end releases its share.
describe('message pairs: the bytes kept for pairing, per target', () => {
  const ticket = (side: string, n: number) => `${side}-7f3a9c${n}e2b4d1`;
  const say = (side: string, n: number) => JSON.stringify({ ticket: ticket(side, n), note: 'x'.repeat(100_000) });

  it('stay within the budget across streams; the messages kept still bind; a stream that ends releases its share', () => {
    const bindings = new Counterparts();
    const streams = new OpenStreams(bindings, undefined, undefined, 300_000);
    const opened = [streams.add(), streams.add(), streams.add()];
    let most = 0;
    for (const [i, s] of opened.entries()) {
      for (let n = 0; n < 4; n++) {
        s.pairs.primary(say('primary', i * 10 + n));
        most = Math.max(most, streams.pending.bytes);
      }
    }
    assert.ok(most <= 300_000, `kept ${most} bytes`);
    assert.ok(streams.pending.bytes > 200_000, `kept ${streams.pending.bytes} bytes: the budget is used, not emptied`);
    // The last stream's latest message is kept: the target's says its counterpart.
    const last = opened[2]!.pairs;
    for (let n = 0; n < 4; n++) last.target(say('target', 20 + n));
    assert.equal(bindings.get(ticket('primary', 23)), ticket('target', 23));
    // The first stream's were dropped for the later ones: no counterpart learned, nothing held for them.
    opened[0]!.pairs.target(say('target', 0));
    assert.equal(bindings.get(ticket('primary', 0)), undefined);
    for (const s of opened) s.done();
    assert.equal(streams.pending.bytes, 0);
    // A message after its stream ended is not kept.
    opened[1]!.pairs.primary(say('primary', 99));
    assert.equal(streams.pending.bytes, 0);
  });
});
