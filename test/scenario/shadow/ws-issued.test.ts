// A value a server issues in a WebSocket message and its client sends back
// (docs/shadow.md "Sessions: each target's own ids and cookies"): a help desk
// hands each connection a ticket numbered by each build from its own start
// (1000, 5000, 9000: plain numbers, which bind only by their use), the client
// acknowledges it on the socket and later reads it over HTTP. Each target
// must get its own ticket back (the relay learns counterparts from server
// messages too, not only from HTTP answers), and the live comparison must
// bind a ticket issued on a socket compared in one batch and read in a later
// one, as `bb diff` of the captures binds it: the new build's changed field
// is a regression, not noise hidden by every mirror's "unknown ticket".
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Client } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
import { startShadow, type Shadow, type ShadowReport } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

/** A help desk: a socket issues a numbered ticket, acknowledged on the socket, read over HTTP; the new build's desk and state differ. */
async function startDesk(build: 'old' | 'new', firstTicket: number): Promise<string> {
  let next = firstTicket;
  const tickets = new Set<number>();
  const server: Server = createServer((req, res) => {
    const m = /^\/tickets\/(\d+)$/.exec(req.url ?? '');
    const known = m && tickets.has(Number(m[1]));
    res.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(known ? { ticket: Number(m[1]), state: build === 'new' ? 'closed' : 'open' } : { error: 'no such ticket' }));
  });
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

/** Resolves once the run has compared `n` requests (bounded: 20 s). */
async function compared(shadow: Shadow, n: number): Promise<void> {
  for (let i = 0; i < 400 && shadow.requests() < n; i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(shadow.requests() >= n, `compared ${shadow.requests()} of ${n}`);
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

function findingKeys(r: ShadowReport): string[] {
  return r.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern}`).sort();
}

describe('bb shadow: values a server issues in WebSocket messages', () => {
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
    assert.deepEqual(offline.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), findingKeys(report));
  });
});
