// The tee's decisions (scenario/shadow/tee.ts), through the library.
// Sampling: --sample keeps a share, and with --sample-by a user's requests
// are all mirrored or none (a stable hash of the header's or cookie's
// value), so their sessions stay whole; every request not chosen is counted
// as `sampled out`. Caps: over the in-flight, queued-bytes or mirrored-body
// cap the mirror is dropped (the primary never) and counted by reason.
//
// A value the client chose, that the candidate echoes otherwise (scenario/shadow/tee.ts, batch-binding.ts,
// diff/bind/counterparts.ts ClientSends). `bb diff` never binds a value the client sent before any server
// issued it (diff/bind/bound.ts: the client's own), nor a word. A new build that capitalizes the user name the
// client signed up with (`alice42` → `Alice42`) is a regression of its answers; bb shadow learned `Alice42` as
// the candidate's counterpart of `alice42` as it learns a server's ids, so the relay sent the candidate
// `GET /users/Alice42` for the client's `GET /users/alice42`, and the live comparison bound the two names:
// live, the sign-up's answer compared equal and its request changed; `bb diff` of the captures found the
// changed name and a missing and an extra read. Now the relay sends the client's value as written and the
// comparison compares it as it is: the live findings equal bb diff's, the changed name on both routes.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type http2 from 'node:http2';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Client } from 'undici';
import { WebSocketServer, WebSocket } from 'ws';
import { startShadow } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { closeHttpAndWs, recordingUpstream, wsServer, type RecordingUpstream } from '../../helpers/servers.js';
import { Cleanups } from '../../helpers/cleanups.js';
import { join } from 'node:path';
import type { Har } from '../../../capture/index.js';
import { h2Client, h2Server, h2WebSocketServer, openH2WebSocket, streamBytes } from '../../helpers/h2-peers.js';
import { OP, parseFrames, wsFrame, type ParsedFrame } from '../../helpers/ws-frames.js';
import { eventsOf, feed, readAll, readSome } from '../../helpers/sse-feed.js';
import { compared, findingKeys, offlineKeys } from './compared.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

async function run(options: { sample: number; sampleBy?: { kind: 'header' | 'cookie'; name: string } }, users: string[], perUser: number) {
  const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
  services.push(primary, candidate);
  const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path(`sample-${services.length}`), bbHome: tmp.bbHome, ...options });
  const c = new Client(shadow.url);
  try {
    for (let i = 0; i < perUser; i++) {
      for (const user of users) {
        const res = await c.request({ method: 'GET', path: '/items', headers: { 'x-user': user, cookie: `uid=${user}` } });
        await res.body.text();
      }
    }
  } finally {
    await c.close();
  }
  const report = await shadow.close();
  return { report, candidate, users: await usersIn(shadow.out.candidate!) };
}

/** How many requests of each user (x-user) a capture holds. */
async function usersIn(har: string): Promise<Map<string, number>> {
  const doc = JSON.parse(await readFile(har, 'utf8')) as { log: { entries: Array<{ request: { headers: Array<{ name: string; value: string }> } }> } };
  const users = new Map<string, number>();
  for (const e of doc.log.entries) {
    const user = e.request.headers.find((h) => h.name.toLowerCase() === 'x-user')!.value;
    users.set(user, (users.get(user) ?? 0) + 1);
  }
  return users;
}

describe('bb shadow: sampling', () => {
  it('--sample-by header: each user all in or all out, the rest counted sampled out', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const { report, candidate, users: mirrored } = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 3);
    const t = report.totals;
    assert.equal(t.requests, 36);
    assert.equal(t.mirrored + (t.skipped['sampled out'] ?? 0), 36);
    // Whole users: each user the candidate saw, it saw all 3 requests of.
    for (const [user, n] of mirrored) assert.equal(n, 3, `${user}: ${n} of 3 mirrored`);
    assert.equal(t.mirrored, mirrored.size * 3, JSON.stringify(t));
    assert.ok(mirrored.size > 0 && mirrored.size < 12, `a share of 12 users at 0.5: ${mirrored.size}`);
    assert.equal(candidate.hits.get('GET /items'), t.mirrored);
  });

  it('--sample-by header: users whose values differ in their last character only spread over the share', async () => {
    // Sequential user ids (a hash whose last character barely moved put all ten on one side of 0.5).
    const users = Array.from({ length: 10 }, (_, i) => `user-${i}`);
    const { users: mirrored } = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 1);
    assert.ok(mirrored.size >= 2 && mirrored.size <= 8, `a share of 10 users at 0.5: ${mirrored.size}`);
  });

  it('--sample-by cookie picks the same users as the header of the same values', async () => {
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const byHeader = await run({ sample: 0.5, sampleBy: { kind: 'header', name: 'x-user' } }, users, 1);
    const byCookie = await run({ sample: 0.5, sampleBy: { kind: 'cookie', name: 'uid' } }, users, 1);
    assert.deepEqual([...byCookie.users.keys()].sort(), [...byHeader.users.keys()].sort());
    assert.equal(byCookie.report.totals.mirrored, byHeader.report.totals.mirrored);
  });

  it('--sample-by cookie: a login (no cookie yet) goes with the session its answer starts, so the user\'s later calls find their session on each target', async () => {
    // Each user logs in (GET /session sets sid), then reads /me twice with that cookie; a re-login starts a new
    // session, sampled by its own value. A login decided by the cookie it lacked (out) left the mirrors without
    // the session the later calls of a user sampled in carried: each /me a 401 there.
    const [primary, candidate, secondary] = [await startShadowService('old'), await startShadowService('old'), await startShadowService('old')];
    services.push(primary, candidate, secondary);
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: tmp.path('sample-login'), bbHome: tmp.bbHome, sample: 0.5, sampleBy: { kind: 'cookie', name: 'sid' } });
    const c = new Client(shadow.url);
    try {
      for (let user = 0; user < 12; user++) {
        let cookie = '';
        for (const login of [1, 2]) {
          const res = await c.request({ method: 'GET', path: '/session', headers: { 'x-user': `user-${user}`, ...(cookie ? { cookie } : {}) } });
          cookie = String(res.headers['set-cookie']).split(';')[0]!;
          await res.body.text();
          for (const read of [1, 2]) {
            const me = await c.request({ method: 'GET', path: '/me', headers: { 'x-user': `user-${user}`, cookie } });
            assert.equal(me.statusCode, 200, `user-${user}, login ${login}, read ${read}`);
            await me.body.text();
          }
        }
      }
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    const t = report.totals;
    assert.equal(t.mirrored + (t.skipped['sampled out'] ?? 0), 12 * 6);
    assert.ok(t.mirrored > 0 && t.mirrored < 72, JSON.stringify(t));
    // Every mirrored read found its session: nothing differs, and each session's login went with its reads.
    assert.deepEqual(report.findings, []);
    assert.equal(t.equal, t.mirrored);
    assert.equal((candidate.hits.get('GET /me') ?? 0), 2 * (candidate.hits.get('GET /session') ?? 0));
  });

  it('--sample 0 mirrors nothing and says why', async () => {
    const { report, candidate } = await run({ sample: 0 }, ['a'], 4);
    assert.deepEqual(report.totals.skipped, { 'sampled out': 4 });
    assert.equal(report.totals.mirrored, 0);
    assert.equal(candidate.hits.get('GET /items') ?? 0, 0);
  });
});

/** A recording upstream, stopped when the file ends. */
async function upstream(hold = false): Promise<RecordingUpstream> {
  const u = await recordingUpstream(hold);
  after(() => u.close());
  return u;
}

/** The `_bb.shadow` tags of a capture's entries, in its order. */
async function shadowTags(har: string): Promise<Array<{ id: number; skipped?: string }>> {
  const doc = JSON.parse(await readFile(har, 'utf8')) as { log: { entries: Array<{ _bb: { shadow: { id: number; skipped?: string } } }> } };
  return doc.log.entries.map((e) => e._bb.shadow);
}

describe('bb shadow: caps drop the mirror, never the primary, and count it', () => {
  it('past the in-flight cap a request is skipped as queue full while the candidate still holds the one before', async () => {
    const [primary, candidate] = [await upstream(), await upstream(true)];
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('in-flight'), bbHome: tmp.bbHome, maxInFlight: 1 });
    const c = new Client(shadow.url);
    try {
      assert.equal((await c.request({ method: 'GET', path: '/a' })).statusCode, 200);
      // The mirror of /a is in flight (the candidate has it, unanswered): /b and /c find the cap full.
      await candidate.received(1);
      for (const path of ['/b', '/c']) {
        const res = await c.request({ method: 'GET', path });
        assert.equal(res.statusCode, 200, `the primary answers ${path}`);
        await res.body.text();
      }
    } finally {
      candidate.release();
      await c.close();
    }
    const report = await shadow.close();
    assert.deepEqual(primary.seen.map((s) => s.url), ['/a', '/b', '/c']);
    assert.deepEqual(candidate.seen.map((s) => s.url), ['/a']);
    assert.equal(report.totals.requests, 3);
    assert.equal(report.totals.mirrored, 1);
    assert.deepEqual(report.totals.skipped, { 'queue full': 2 });
    // The primary's capture says which were not mirrored, and why.
    assert.deepEqual((await shadowTags(shadow.out.primary!)).map((t) => t.skipped ?? 'mirrored'), ['mirrored', 'queue full', 'queue full']);
  });

  it('a body past the queued-bytes cap is queue full, past the mirrored-body cap too large; the primary gets each whole', async () => {
    const [primary, candidate] = [await upstream(), await upstream()];
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('bytes'), bbHome: tmp.bbHome, mirror: 'all', maxQueuedBytes: 16, maxMirrorBody: 32 });
    const c = new Client(shadow.url);
    try {
      for (const [path, n] of [['/small', 8], ['/queued', 24], ['/large', 100]] as const) {
        const res = await c.request({ method: 'POST', path, body: 'x'.repeat(n) });
        assert.equal(res.statusCode, 200);
        await res.body.text();
      }
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    assert.deepEqual(primary.seen.map((s) => [s.url, s.bodyBytes]), [['/small', 8], ['/queued', 24], ['/large', 100]]);
    assert.deepEqual(candidate.seen.map((s) => [s.url, s.bodyBytes]), [['/small', 8]]);
    assert.equal(report.totals.mirrored, 1);
    assert.deepEqual(report.totals.skipped, { 'queue full': 1, 'too large': 1 });
    assert.equal(report.totals.mirrored + 2, report.totals.requests);
    assert.deepEqual(report.routes['POST /large']?.skipped, { 'too large': 1 });
  });
});

/** A WebSocket server that records the size of every message it reads; with `stall`, it reads nothing (its socket paused). */
async function sizesServer(stall = false): Promise<{ url: string; sizes: number[]; closed: Promise<void>; resume(): void }> {
  const sizes: number[] = [];
  let closed!: () => void;
  const done = new Promise<void>((r) => (closed = r));
  let socket: import('node:net').Socket | undefined;
  const server = await wsServer((ws, req) => {
    socket = req.socket;
    if (stall) socket.pause();
    ws.on('message', (data: Buffer) => sizes.push(data.length));
    ws.once('close', closed);
  });
  after(() => server.close());
  return { url: server.url, sizes, closed: done, resume: () => socket?.resume() };
}

// WebSocket messages count against the queued-bytes cap too. Before, a client's messages to a target that had
// stopped reading piled up in the shadow's memory without end (200 MiB sent, 192 MiB held), and a message the tap
// kept only the start of (past --body-cap) reached each target cut. Either now drops the conversation's mirrors on
// every target, tags its exchange in each capture, and counts it skipped; the primary gets every byte.
describe('bb shadow: a WebSocket past the caps', () => {
  for (const [why, opts] of [
    ['queue full', { maxQueuedBytes: 1 << 20 }],
    ['too large', { bodyCap: 64 << 10 }],
  ] as const) {
    it(`${why === 'queue full' ? 'a target that stopped reading: past the queued-bytes cap' : 'a message past --body-cap'} the conversation's mirrors are dropped as ${why}; the primary gets every message, no target a cut one`, async () => {
      const primary = await sizesServer();
      const candidate = await sizesServer(why === 'queue full');
      const outDir = tmp.path(`ws-${why.replace(' ', '-')}`);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir, bbHome: tmp.bbHome, ...opts });
      const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/upload`);
      await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
      // Small messages first (mirrored), then 96 MiB in 1 MiB messages (more than the kernel's socket buffers of the
      // two hops to a target can take: past them the shadow's own memory would hold the rest), or one of 100 KiB.
      const sent = why === 'queue full' ? [10, 10, ...Array.from({ length: 96 }, () => 1 << 20)] : [10, 10, 100 << 10, 10];
      for (const [i, n] of sent.entries()) {
        ws.send(Buffer.alloc(n, i));
        await new Promise<void>((resolve) => ws.once('pong', () => resolve()).ping());
      }
      // Each target's side is cut when the mirrors are dropped (a stalled target reads what reached it, then the end).
      candidate.resume();
      const cut = await Promise.race([candidate.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000).unref())]);
      assert.ok(cut, "the target's side was not cut");
      assert.ok(candidate.sizes.every((n, i) => n === sent[i]), `the candidate got whole messages only: ${candidate.sizes}`);
      ws.close();
      await once(ws, 'close');
      const report = await shadow.close(2_000);
      assert.deepEqual(primary.sizes, sent);
      if (why === 'too large') assert.deepEqual(candidate.sizes, [10, 10], 'the messages before it, none cut');
      assert.deepEqual(report.totals.skipped, { [why]: 1 }, JSON.stringify(report.totals));
      assert.equal(report.totals.mirrored, 0);
      // Each capture tags it, so bb diff of the captures compares it no more than the live comparison did.
      for (const side of ['primary', 'candidate'] as const) {
        assert.deepEqual((await shadowTags(join(outDir, `${side}.har`))).map((t) => t.skipped), [why], side);
      }
      const offline = await diffCaptures(join(outDir, 'primary.har'), join(outDir, 'candidate.har'));
      assert.equal(offline.exitCode, 0, JSON.stringify(offline.findings));
    });
  }
});

// An h2 upload still arriving when the primary's answer head came is mirrored live, the rest as it crosses. A target
// that stopped reading it (its flow-control window full) had the shadow hold the rest without end; now what a
// target holds of streams still arriving counts against the queued-bytes cap, and past it the stream's mirrors are
// cancelled, the exchange tagged skipped in each capture.
describe('bb shadow: an h2 upload still arriving past the queued-bytes cap', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  it("a target that stopped reading: the stream's mirrors are cancelled as queue full; the primary gets every byte", async () => {
    let primaryBytes = 0;
    const primary = await h2Server(cleanups, (stream) => {
      // The answer's head at once: the mirror goes while the upload still arrives.
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.on('data', (c: Buffer) => (primaryBytes += c.length));
      stream.on('end', () => stream.end(JSON.stringify({ received: primaryBytes })));
    });
    let candidateStreams = 0;
    let candidateClosed!: () => void;
    const candidateDone = new Promise<void>((r) => (candidateClosed = r));
    const candidate = await h2Server(cleanups, (stream) => {
      candidateStreams++;
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      // Reads nothing: its window fills and the mirror's stream can send no more.
      stream.pause();
      stream.once('close', candidateClosed);
    });
    const outDir = tmp.path('h2-upload-cap');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir, bbHome: tmp.bbHome, mirror: 'all', maxQueuedBytes: 1 << 20 });
    const { session } = h2Client(shadow.url, cleanups);
    const req = session.request({ ':method': 'POST', ':path': '/upload', 'content-type': 'application/octet-stream' });
    const [head] = (await once(req, 'response')) as [http2.IncomingHttpHeaders];
    assert.equal(head[':status'], 200);
    const answer = streamBytes(req);
    const total = 8 << 20;
    for (let i = 0; i < 8; i++) if (!req.write(Buffer.alloc(1 << 20, i))) await once(req, 'drain');
    req.end();
    assert.deepEqual(JSON.parse((await answer).toString()), { received: total });
    // The candidate's stream is cancelled when its mirror is dropped.
    const cut = await Promise.race([candidateDone.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000).unref())]);
    assert.ok(cut, "the candidate's stream was not cancelled");
    session.close();
    const report = await shadow.close(2_000);
    assert.equal(primaryBytes, total);
    assert.equal(candidateStreams, 1);
    assert.deepEqual(report.totals.skipped, { 'queue full': 1 }, JSON.stringify(report.totals));
    assert.equal(report.totals.mirrored, 0);
    for (const side of ['primary', 'candidate'] as const) {
      assert.deepEqual((await shadowTags(join(outDir, `${side}.har`))).map((t) => t.skipped), ['queue full'], side);
    }
    const offline = await diffCaptures(join(outDir, 'primary.har'), join(outDir, 'candidate.har'));
    assert.equal(offline.exitCode, 0, JSON.stringify(offline.findings));
  });
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('bb shadow: the bodies of requests still arriving', () => {
  // Each held up to the mirrored-body cap until its request ended: many uploads at once (1,000 of 8 MiB) were that
  // many megabytes of the shadow's memory. Now all of them together hold at most the queued-bytes cap: the upload
  // that would take them past it is not mirrored (queue full), as soon as it would.
  it('an upload that would take the gathered bodies past the queued-bytes cap is queue full while it arrives', async () => {
    const [primary, candidate] = [await upstream(), await upstream(true)];
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('gathered'), bbHome: tmp.bbHome, mirror: 'all', maxQueuedBytes: 1500 });
    const uploads = ['/a', '/b'].map((path) => {
      const body = new PassThrough();
      const c = new Client(shadow.url);
      return { path, body, c, res: c.request({ method: 'POST', path, body, headers: { 'content-length': '1200' } }) };
    });
    try {
      // 600 bytes of /a, then 600 of /b (1,200 held), then /b's last 600 would make 1,800.
      // (Apart by 300 ms: each read by bb, in this order, before the next is sent.)
      uploads[0]!.body.write('a'.repeat(600));
      await sleep(300);
      uploads[1]!.body.write('b'.repeat(600));
      await sleep(300);
      // /b ends first: had it been held, it would be mirrored, and /a (the candidate still holding /b) would not.
      uploads[1]!.body.end('b'.repeat(600));
      assert.equal((await uploads[1]!.res).statusCode, 200);
      uploads[0]!.body.end('a'.repeat(600));
      assert.equal((await uploads[0]!.res).statusCode, 200);
      await Promise.race([candidate.received(1), sleep(10_000).then(() => assert.fail('no request was mirrored'))]);
    } finally {
      candidate.release();
      for (const u of uploads) await u.c.close();
    }
    const report = await shadow.close();
    assert.deepEqual(primary.seen.map((s) => [s.url, s.bodyBytes]).sort(), [['/a', 1200], ['/b', 1200]]);
    assert.deepEqual(candidate.seen.map((s) => [s.url, s.bodyBytes]), [['/a', 1200]]);
    assert.deepEqual(report.totals.skipped, { 'queue full': 1 });
    assert.deepEqual(report.routes['POST /b']?.skipped, { 'queue full': 1 });
  });
});

/** A request listener that answers JSON once each request's body is in; `paths` notes each request's method and path. */
function jsonAnswers(
  paths: string[],
  answer: (req: http.IncomingMessage, body: string, send: (status: number, doc: unknown) => void, res: http.ServerResponse) => void,
): http.RequestListener {
  return (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url}`);
      answer(req, body, (status, doc) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc)), res);
    });
  };
}

/**
 * One build of a service whose store every build shares (shadowed builds read one database): the paths it got go
 * to a new list in `seen`; `onSocket`, when given, answers WebSocket connections. Closed when the file ends.
 */
async function sharedBuild(seen: string[][], answer: Parameters<typeof jsonAnswers>[1], onSocket?: (ws: WebSocket) => void): Promise<string> {
  const paths: string[] = [];
  seen.push(paths);
  const server = http.createServer(jsonAnswers(paths, answer));
  const wss = onSocket ? new WebSocketServer({ server }) : undefined;
  if (onSocket) wss!.on('connection', onSocket);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => closeHttpAndWs(server, wss));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A user service; the new build capitalizes the name it stores and answers (and finds users whatever the case).
 * `known`: its users, by lower-case name; builds given the same map share one store (as shadowed builds read one database).
 */
async function users(build: 'old' | 'new', known = new Map<string, string>()): Promise<{ url: string; paths: string[]; said: string[] }> {
  const paths: string[] = [];
  const said: string[] = [];
  const shown = (name: string) => (build === 'new' ? name[0]!.toUpperCase() + name.slice(1) : name);
  const server = http.createServer(
    jsonAnswers(paths, (req, body, send, res) => {
      if (req.method === 'POST' && req.url === '/users') {
        const name = (JSON.parse(body) as { username: string }).username;
        const username = build === 'new' ? name[0]!.toUpperCase() + name.slice(1) : name;
        known.set(name.toLowerCase(), username);
        return send(201, { username, created: true });
      }
      if (req.url?.startsWith('/feed?')) {
        // An event stream of what the user the client named follows, the name as the server shows it.
        const user = new URL(req.url, 'http://x').searchParams.get('user') ?? '';
        known.set(user.toLowerCase(), shown(user));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ user: shown(user), n: 1 })}\n\n`);
        return void res.end(`data: ${JSON.stringify({ user: shown(user), n: 2 })}\n\n`);
      }
      const m = /^\/users\/([^/?]+)$/.exec(req.url ?? '');
      if (m && known.has(m[1]!.toLowerCase())) return send(200, { username: shown(known.get(m[1]!.toLowerCase())!), plan: 'free' });
      send(404, { error: 'no such user' });
    }),
  );
  // A chat: the client joins with the name it chose, then speaks as it; the server answers with the name as it shows it.
  const wss = new WebSocketServer({ server, path: '/chat' });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const text = data.toString();
      said.push(text);
      const m = JSON.parse(text) as { join?: string; as?: string; say?: string; whoami?: boolean };
      if (m.whoami) {
        const last = [...known.values()].at(-1);
        ws.send(JSON.stringify({ me: last === undefined ? null : shown(last) }));
      }
      else if (m.join) {
        known.set(m.join.toLowerCase(), shown(m.join));
        ws.send(JSON.stringify({ joined: shown(m.join), room: 'lobby' }));
      } else ws.send(JSON.stringify({ from: shown(m.as ?? ''), text: m.say }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => closeHttpAndWs(server, wss));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, said };
}

describe('bb shadow: a value the client chose, echoed otherwise by the candidate', () => {
  for (const name of ['alice42', 'alicewonder']) {
    it(`${name === 'alice42' ? 'a made value' : 'a word'} (${name}): sent on as written, compared as it is; live = bb diff of the captures`, async () => {
      const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
      const out = tmp.path(name);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
      const c = new Client(shadow.url);
      try {
        const made = await c.request({ method: 'POST', path: '/users', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: name }) });
        assert.equal(made.statusCode, 201);
        await made.body.text();
        // The sign-up compared (and its answers learned from) before the read: a later batch.
        await compared(shadow, 1);
        for (let i = 0; i < 100 && (shadow.report()?.totals.regressions ?? 0) < 1; i++) await new Promise((r) => setTimeout(r, 20));
        const read = await c.request({ method: 'GET', path: `/users/${name}` });
        assert.equal(read.statusCode, 200);
        await read.body.text();
      } finally {
        await c.close();
      }
      const report = await shadow.close();
      // Each target got the client's name as the client wrote it.
      assert.deepEqual(candidate.paths, ['POST /users', `GET /users/${name}`]);
      assert.deepEqual(secondary.paths, ['POST /users', `GET /users/${name}`]);
      const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
      assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: ['real changed response.body.username'], offline: ['real changed response.body.username'] });
      assert.deepEqual(Object.fromEntries(Object.entries(report.routes).map(([r, n]) => [r, n.regressions])), { 'POST /users': 1, [`GET /users/${name}`]: 1 });
    });
  }

  it('a name the client joined a chat with: its later messages and reads reach each target as written; live = bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
    const out = tmp.path('chat');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/chat`);
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const answers: string[] = [];
    const next = () => new Promise<void>((r) => ws.once('message', (d) => (answers.push(d.toString()), r())));
    let got = next();
    ws.send(JSON.stringify({ join: 'bob42' }));
    await got;
    // The targets' answers to the join crossed (the relay pairs them) before the client speaks again.
    await new Promise((r) => setTimeout(r, 200));
    got = next();
    ws.send(JSON.stringify({ say: 'hi', as: 'bob42' }));
    await got;
    await new Promise((r) => setTimeout(r, 200));
    const c = new Client(shadow.url);
    const read = await c.request({ method: 'GET', path: '/users/bob42' });
    assert.equal(read.statusCode, 200);
    await read.body.text();
    await c.close();
    ws.close();
    await new Promise((r) => ws.once('close', r));
    await compared(shadow, 2);
    const report = await shadow.close();
    // The client saw the primary's answers only.
    assert.deepEqual(answers, ['{"joined":"bob42","room":"lobby"}', '{"from":"bob42","text":"hi"}']);
    // Each target heard the client's name as the client wrote it.
    for (const t of [candidate, secondary]) {
      assert.deepEqual(t.said, ['{"join":"bob42"}', '{"say":"hi","as":"bob42"}']);
      assert.deepEqual(t.paths, ['GET /users/bob42']);
    }
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(findingKeys(report), offlineKeys(offline), JSON.stringify(report.findings.map((f) => [f.pattern, f.samples[0]])));
    assert.ok(findingKeys(report).includes('real changed response.body.username'), findingKeys(report).join('\n'));
    assert.ok(findingKeys(report).some((k) => k.startsWith('real changed ws.messages')), findingKeys(report).join('\n'));
  });

  it('a name the client asked an event stream for: its later read reaches each target as written; live = bb diff of the captures', async () => {
    const [primary, candidate, secondary] = [await users('old'), await users('new'), await users('old')];
    const out = tmp.path('feed');
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
    const c = new Client(shadow.url);
    try {
      const feed = await c.request({ method: 'GET', path: '/feed?user=carol42' });
      assert.match(await feed.body.text(), /"user":"carol42"/);
      await compared(shadow, 1);
      for (let i = 0; i < 100 && (shadow.report()?.totals.regressions ?? 0) < 1; i++) await new Promise((r) => setTimeout(r, 20));
      const read = await c.request({ method: 'GET', path: '/users/carol42' });
      assert.equal(read.statusCode, 200);
      await read.body.text();
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    for (const t of [candidate, secondary]) assert.deepEqual(t.paths, ['GET /feed?user=carol42', 'GET /users/carol42']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: offlineKeys(offline), offline: ['real changed response.body.username', 'real changed response.events[].data.user'] });
  });

  // Mirrored (`--mirror all`: every build stores the name it was given), or not (a POST, by default: it reaches the
  // primary alone, and the builds share one store, as shadowed builds read one database).
  for (const mirrored of [true, false]) {
    const name = mirrored ? 'dave42' : 'erin42';
    it(`a name the client signed up with${mirrored ? '' : ' in a request that was not mirrored'}, then echoed by a socket opened later: the later read reaches each target as written; live = bb diff of the captures`, async () => {
      const store = mirrored ? undefined : new Map<string, string>();
      const [primary, candidate, secondary] = [await users('old', store), await users('new', store), await users('old', store)];
      const out = tmp.path(`whoami-${name}`);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir: out, bbHome: tmp.bbHome, ...(mirrored ? { mirror: 'all' as const } : {}), reportEveryMs: 50 });
      const c = new Client(shadow.url);
      const made = await c.request({ method: 'POST', path: '/users', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: name }) });
      assert.equal(made.statusCode, 201);
      await made.body.text();
      const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/chat`);
      await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
      const me = new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
      ws.send(JSON.stringify({ whoami: true }));
      assert.equal(await me, `{"me":"${name}"}`);
      ws.close();
      await new Promise((r) => ws.once('close', r));
      // The socket's entry compared (and learned from, on the relay and in the comparison) before the read.
      await compared(shadow, mirrored ? 2 : 1);
      for (let i = 0; i < 100 && (shadow.report()?.routes['GET /chat']?.regressions ?? 0) < 1; i++) await new Promise((r) => setTimeout(r, 20));
      const read = await c.request({ method: 'GET', path: `/users/${name}` });
      assert.equal(read.statusCode, 200);
      await read.body.text();
      await c.close();
      const report = await shadow.close();
      assert.deepEqual(report.totals.skipped, mirrored ? {} : { unsafe: 1 });
      for (const t of [candidate, secondary]) assert.deepEqual(t.paths, [...(mirrored ? ['POST /users'] : []), `GET /users/${name}`]);
      const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
      assert.deepEqual({ live: findingKeys(report), offline: offlineKeys(offline) }, { live: offlineKeys(offline), offline: ['real changed response.body.username', 'real changed ws.messages[].data.me'] });
    });
  }

  it('an id a request that was not mirrored created (the primary alone got it), read back by a mirrored request: each target reads it as the primary issued it, equal; live = bb diff of the captures', async () => {
    // One store for every build: the create (a POST, not mirrored) reaches the primary only.
    const items = new Map<string, string>();
    const seen: string[][] = [];
    const build = () =>
      sharedBuild(seen, (req, body, send) => {
        if (req.method === 'POST' && req.url === '/items') {
          // An id no value rule rewrites (a random one might read as a uuid or a hex run, and compare as that shape on both sides).
          const id = `it_${(0x8f3a2 + items.size).toString(16)}`;
          items.set(id, (JSON.parse(body) as { name: string }).name);
          return send(201, { id });
        }
        const m = /^\/items\/([^/?]+)$/.exec(req.url ?? '');
        if (m && items.has(m[1]!)) return send(200, { id: m[1], name: items.get(m[1]!) });
        send(404, { error: 'no such item' });
      });
    const [primary, candidate, secondary] = [await build(), await build(), await build()];
    const out = tmp.path('created');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
    const c = new Client(shadow.url);
    const made = await c.request({ method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lamp' }) });
    assert.equal(made.statusCode, 201);
    const { id } = (await made.body.json()) as { id: string };
    const read = await c.request({ method: 'GET', path: `/items/${id}` });
    assert.equal(read.statusCode, 200);
    await read.body.text();
    await c.close();
    const report = await shadow.close();
    assert.deepEqual(seen.slice(1), [[`GET /items/${id}`], [`GET /items/${id}`]]);
    assert.deepEqual({ skipped: report.totals.skipped, equal: report.totals.equal, findings: findingKeys(report) }, { skipped: { unsafe: 1 }, equal: 1, findings: [] });
    // Not even noise: the primary and each mirror read the same item the same way.
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), []);
    assert.equal(offline.noiseRun?.differences, 0);
  });

  it('a ticket a socket that was not mirrored issued, read back by a mirrored request while the socket stayed open: equal; live = bb diff of the captures', async () => {
    // One ticket desk for every build: the socket (sampled out: it names no user) reaches the primary only.
    const tickets = new Map<string, string>();
    const seen: string[][] = [];
    const build = () =>
      sharedBuild(
        seen,
        (req, _body, send) => {
          const m = /^\/tickets\/([^/?]+)$/.exec(req.url ?? '');
          if (m && tickets.has(m[1]!)) return send(200, { ticket: m[1], state: tickets.get(m[1]!) });
          send(404, { error: 'no such ticket' });
        },
        (ws) => {
          // An id no value rule rewrites (a random one might read as a uuid or a hex run, and compare as that shape on both sides).
          const ticket = `t_${(0x4f2a9b + tickets.size).toString(16)}`;
          tickets.set(ticket, 'open');
          ws.send(JSON.stringify({ ticket }));
        },
      );
    const [primary, candidate, secondary] = [await build(), await build(), await build()];
    const out = tmp.path('desk');
    // Requests that name no user are sampled out: the socket; the read names one.
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, sample: 0.999, sampleBy: { kind: 'header', name: 'x-user' }, reportEveryMs: 50 });
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/desk`);
    const { ticket } = JSON.parse((await new Promise<Buffer>((r, j) => (ws.once('message', r), ws.once('error', j)))).toString()) as { ticket: string };
    const c = new Client(shadow.url);
    const read = await c.request({ method: 'GET', path: `/tickets/${ticket}`, headers: { 'x-user': 'ada' } });
    assert.equal(read.statusCode, 200);
    await read.body.text();
    await c.close();
    // The socket ends after the read: the primary's capture holds it after the read.
    ws.close();
    await new Promise((r) => ws.once('close', r));
    const report = await shadow.close();
    assert.deepEqual(seen.slice(1), [[`GET /tickets/${ticket}`], [`GET /tickets/${ticket}`]]);
    assert.deepEqual({ skipped: report.totals.skipped, equal: report.totals.equal, findings: findingKeys(report) }, { skipped: { 'sampled out': 1 }, equal: 1, findings: [] });
    const tags = await shadowTags(`${out}/primary.har`);
    assert.deepEqual(tags.map((t) => t.skipped ?? 'mirrored'), ['mirrored', 'sampled out']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), []);
    assert.equal(offline.noiseRun?.differences, 0);
  });
});

// A socket opened right after a login: its upgrade carries the session cookie the login's answer set. The relay
// sends each target its own cookie, and a target whose login answer is still on its way when the client opens
// the socket is waited for (answer-wait.ts), as an HTTP request on another connection is: the upgrade went with
// the primary's cookie before, every mirror refused it (401), and the socket's real change read as noise.
describe('bb shadow: a socket opened right after a login', () => {
  it("the upgrade goes to each target with its own session cookie, even when its login answer comes after the primary's", async () => {
    const upgrades: string[][] = [];
    const build = async (kind: 'old' | 'new', loginDelayMs: number) => {
      const sessions = new Set<string>();
      const seen: string[] = [];
      upgrades.push(seen);
      const server = http.createServer((req, res) => {
        if (req.url === '/login') {
          const sid = randomBytes(16).toString('base64url');
          sessions.add(sid);
          setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `sid=${sid}; Path=/; HttpOnly` }).end('{"ok":true}'), loginDelayMs);
          return;
        }
        res.writeHead(404).end();
      });
      const wss = new WebSocketServer({ noServer: true });
      server.on('upgrade', (req, socket, head) => {
        const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
        seen.push(sid && sessions.has(sid) ? 'own session' : sid ? 'unknown session' : 'no session');
        if (!sid || !sessions.has(sid)) return void socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (d) => ws.send(JSON.stringify({ echo: String(d), room: kind === 'new' ? 'lobby-2' : 'lobby' }))));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      after(() => closeHttpAndWs(server, wss));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    // The candidate's and the secondary's logins answer 150 ms after the primary's.
    const [primary, candidate, secondary] = [await build('old', 0), await build('new', 150), await build('old', 150)];
    const out = tmp.path('ws-session');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
    const c = new Client(shadow.url);
    const login = await c.request({ method: 'GET', path: '/login' });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    await login.body.text();
    await c.close();
    // At once, on a new connection: the mirrors' logins are still on their way.
    const ws = new WebSocket(`${shadow.url.replace('http', 'ws')}/chat`, { headers: { cookie } });
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    const echoed = new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
    ws.send('hi');
    assert.equal(await echoed, '{"echo":"hi","room":"lobby"}');
    ws.close(1000);
    await new Promise((r) => ws.once('close', r));
    const report = await shadow.close();
    assert.deepEqual(upgrades, [['own session'], ['own session'], ['own session']]);
    assert.equal(report.totals.errors, 0);
    assert.deepEqual(findingKeys(report), ['real changed ws.messages[].data.room']);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
  });
});

// An event stream its client left after a few events (a page closed, a
// reader that had enough) is compared as far as the client read it
// (cutCopies): each target's copy is cut once it has
// as many events as the primary's client got, waiting for a slower target,
// as bb replay cuts its copy. Before, the copies ran on for a grace period
// and every later event was an `added` row: unclassified without a
// secondary. Over HTTP/1.1 and over h2 (where the copies did not end with the
// primary's stream at all, but at the run's end). A copy that ran ahead of the
// client (its next event came before the client left) is compared as far as
// the primary's got (diff/compare-loop.ts asFarAs), live and in bb diff.
describe('bb shadow: an event stream its client left after a few events', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  for (const h2 of [false, true]) {
    const over = h2 ? 'h2' : 'HTTP/1.1';
    it(`is compared as far as the client read it, a slower candidate's copy waited for (${over})`, async () => {
      const [primary, candidate] = [await feed(cleanups, h2), await feed(cleanups, h2, 150)];
      const out = tmp.path(`cut-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      await readSome(shadow.url, h2, 2);
      const report = await shadow.close();
      assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1);
      // Each copy is cut at the read that brings the client's count, so an event that came in that read is recorded
      // too: on a busy machine the feed's timer fires late and sends two at once (CI once recorded the candidate's
      // copy at 3). Uncut, the copy ran on for STREAM_END_GRACE_MS after the primary's end: five events or more.
      const counts = [eventsOf(`${out}/primary.har`)[0]!, eventsOf(`${out}/candidate.har`)[0]!];
      assert.ok(counts.every((n) => n === 2 || n === 3), String(counts));
      assert.equal((await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`)).verdict, 'match');
    });

    it(`a copy that ran ahead of the primary's client is compared as far as the client read (${over})`, async () => {
      // The primary is slow to start its feed: the candidate's copy has more events by the time the client leaves.
      // 400 ms, not 150: under load 7-9 a candidate's copy that started late once had only the client's 2 by then.
      const [primary, candidate] = [await feed(cleanups, h2, 400), await feed(cleanups, h2)];
      const out = tmp.path(`ahead-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      await readSome(shadow.url, h2, 2);
      const report = await shadow.close();
      assert.ok(eventsOf(`${out}/candidate.har`)[0]! > 2, String(eventsOf(`${out}/candidate.har`)));
      assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1);
      // bb diff of the captures too, whichever side the primary's is given on.
      assert.equal((await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`)).verdict, 'match');
      assert.equal((await diffCaptures(`${out}/candidate.har`, `${out}/primary.har`)).verdict, 'match');
    });

    it(`a change within what the client read is still found (${over})`, async () => {
      const [primary, candidate] = [await feed(cleanups, h2), await feed(cleanups, h2, 0, true)];
      const out = tmp.path(`cut-changed-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      await readSome(shadow.url, h2, 2);
      const report = await shadow.close();
      assert.equal(report.totals.unclassified, 1, JSON.stringify(report.findings));
      // Its copy was ahead by the extra event when the client left: cut then (at two or three, or a tick or two later when
      // the client's leaving is seen late: CI recorded four under the full suite's load), not run to its end (eleven).
      const cut = eventsOf(`${out}/candidate.har`)[0]!;
      assert.ok(cut >= 2 && cut <= 5, String(cut));
    });
  }
});

// An event stream its server ended: each target's copy is the target's to end. A probe's candidate sent the same
// events 300 ms behind the primary; its copy was cut a quarter second after the primary's stream ended, and the
// events after the cut were reported removed, live and in bb diff.
describe('bb shadow: an event stream its server ended, the candidate slower', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  for (const h2 of [false, true]) {
    const over = h2 ? 'h2' : 'HTTP/1.1';
    it(`waits for the candidate's copy to end: equal, every event recorded (${over})`, async () => {
      const [primary, candidate] = [await feed(cleanups, h2), await feed(cleanups, h2, 600)];
      const out = tmp.path(`slow-end-${over}`);
      const shadow = await startShadow({ primary, candidate, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
      assert.equal((await readAll(shadow.url, h2)).split('data:').length - 1, 10);
      const report = await shadow.close();
      assert.deepEqual(report.findings, [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1);
      assert.deepEqual([eventsOf(`${out}/primary.har`)[0], eventsOf(`${out}/candidate.har`)[0]], [10, 10]);
      assert.equal((await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`)).verdict, 'match');
    });
  }
});

// A WebSocket over an HTTP/2 stream (RFC 8441) through `bb shadow`: the
// primary answers it over its stream and its capture records the messages;
// each mirror opens the same conversation as a WebSocket over HTTP/1.1 (as
// `bb replay` does), with the client's messages, and the two are compared as
// `bb diff` compares them (the extended CONNECT as the GET, its 200 as the
// 101). Before, it was skipped (`skipped: WebSocket over HTTP/2`).
describe('bb shadow and a WebSocket over HTTP/2', () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());

  it('is mirrored as a WebSocket over HTTP/1.1: an identical conversation is equal, a changed answer is the one finding; live = bb diff of the captures', async () => {
    const echo = (f: ParsedFrame) => wsFrame({ opcode: f.opcode, payload: f.payload });
    const primary = await h2WebSocketServer(cleanups, echo);
    // The candidate speaks WebSocket over HTTP/1.1, its 101 with a Date as node:http2 sends one, and answers "change me" otherwise.
    const heard: string[] = [];
    const candidateWs = await wsServer((ws, req) => {
      heard.push(`${req.url} ${req.headers.host}`);
      ws.on('message', (data) => ws.send(String(data) === 'change me' ? 'changed me' : String(data)));
    });
    candidateWs.wss.on('headers', (h) => h.push(`Date: ${new Date().toUTCString()}`));
    cleanups.add(() => candidateWs.close());
    const candidateUrl = candidateWs.url;
    const outDir = tmp.path('h2-websocket');
    // The default policy: an extended CONNECT is a WebSocket's GET, a safe method.
    const shadow = await startShadow({ primary: primary.url, candidate: candidateUrl, outDir, bbHome: tmp.bbHome });
    const { session } = h2Client(shadow.url, cleanups);
    for (const [path, text] of [['/live', 'ping me'], ['/live?room=2', 'change me']] as const) {
      const { stream, head } = await openH2WebSocket(session, { ':path': path, ':authority': new URL(shadow.url).host, 'sec-websocket-version': '13' });
      assert.equal(head[':status'], 200);
      const answers = streamBytes(stream);
      stream.write(wsFrame({ opcode: OP.text, payload: text, mask: true }));
      stream.end(wsFrame({ opcode: OP.close, payload: Buffer.from([0x03, 0xe8]), mask: true }));
      // The client hears the primary alone.
      assert.deepEqual(parseFrames(await answers).frames.map((f) => [f.opcode, f.payload.toString('hex')]), [[OP.text, Buffer.from(text).toString('hex')], [OP.close, '03e8']]);
    }
    session.close();
    await compared(shadow, 2);
    const report = await shadow.close();
    assert.deepEqual(report.totals.skipped ?? {}, {}, JSON.stringify(report.totals));
    assert.equal(report.totals.mirrored, 2);
    assert.equal(report.totals.equal, 1, JSON.stringify(report.findings));
    // Each conversation reached the candidate with its path, and the Host its own authority.
    assert.deepEqual(heard.sort(), ['/live 127.0.0.1:' + new URL(candidateUrl).port, '/live?room=2 127.0.0.1:' + new URL(candidateUrl).port].sort());
    const live = findingKeys(report);
    assert.deepEqual(live, ['unclassified changed ws.messages[].data'], JSON.stringify(report.findings));
    const primaryHar = JSON.parse(await readFile(join(outDir, 'primary.har'), 'utf8')) as Har;
    const candidateHar = JSON.parse(await readFile(join(outDir, 'candidate.har'), 'utf8')) as Har;
    assert.deepEqual(primaryHar.log.entries.map((e) => [e.request.method, e.response.status]), [['CONNECT', 200], ['CONNECT', 200]]);
    assert.deepEqual(candidateHar.log.entries.map((e) => [e.request.method, e.response.status]), [['GET', 101], ['GET', 101]]);
    const offline = await diffCaptures(join(outDir, 'primary.har'), join(outDir, 'candidate.har'));
    assert.deepEqual(offlineKeys(offline).map((k) => k.replace(/^real /, 'unclassified ')), live);
  });
});

// A POST with `Expect: 100-continue` the server refuses before the body (413 at checkContinue): the client sends no
// body, so the request as sent has a Content-Length and nothing after it. A probe's identical builds differed in it
// (the mirror sent it with Content-Length 0). Not mirrored now: `skipped: body not sent`. One the server accepts
// (100 Continue, then the body) is mirrored and equal.
describe('bb shadow: Expect: 100-continue', () => {
  it('a request refused before its body is skipped as body not sent; one accepted is mirrored and equal', async () => {
    const start = async () => {
      const server = http.createServer((req, res) => {
        let n = 0;
        req.on('data', (c: Buffer) => (n += c.length));
        req.on('end', () => res.end(JSON.stringify({ got: n })));
      });
      server.on('checkContinue', (req, res) => {
        if (req.url === '/big') return res.writeHead(413).end('too big');
        res.writeContinue();
        server.emit('request', req, res);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
    };
    const [primary, candidate] = [await start(), await start()];
    try {
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('expect'), bbHome: tmp.bbHome, mirror: 'all', reportEveryMs: 50 });
      const post = (path: string) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(`${shadow.url}${path}`, { method: 'POST', headers: { expect: '100-continue', 'content-length': 5000 }, agent: false });
          req.on('continue', () => req.end(Buffer.alloc(5000, 1)));
          req.on('response', (res) => (res.resume(), res.on('end', () => resolve(res.statusCode!))));
          req.on('error', reject);
        });
      assert.equal(await post('/big'), 413);
      assert.equal(await post('/ok'), 200);
      const report = await shadow.close();
      assert.deepEqual(report.totals.skipped, { 'body not sent': 1 });
      assert.equal(report.totals.equal, 1, JSON.stringify(report.findings));
      assert.deepEqual(report.findings, []);
    } finally {
      await primary.close();
      await candidate.close();
    }
  });
});
