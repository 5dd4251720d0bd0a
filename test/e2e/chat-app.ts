// A chat app for the browser target of issue 33: a page, a session cookie,
// Server-Sent Events carrying epoch-ms fields, and a Socket.IO conversation
// that starts on HTTP long-polling and upgrades to a WebSocket.
//
// socket.io is not a dependency of bb, so both ends of the wire protocol are
// written here, small and on purpose: the server speaks Engine.IO v4 (the
// polling handshake `0{"sid":…}`, packets joined by \x1e, the `2probe` /
// `3probe` upgrade with the pending poll answered by a noop `6`, then `5`)
// with Socket.IO v5 packets on top (`40` connect, `42[event,…]`, `420[…]`
// with an ack answered `430[…]`, `41` disconnect), on `ws`; the page's
// script sends what socket.io-client 4 sends, in its order, with its cache
// buster (`t=`, time in base 36 plus random characters). Every id (the
// Engine.IO and Socket.IO sids, message ids, the cookie) is random per run.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Cleanups } from '../helpers/cleanups.js';
import { nanoId } from '../helpers/ids.js';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>chat</title>
<link rel="icon" href="data:,"></head>
<body><pre id="log"></pre>
<script>
(async () => {
  const log = (line) => { document.getElementById('log').textContent += line + '\\n'; };
  // socket.io-client 4's cache buster (engine.io-client 6.6 randomString).
  const t = () => Date.now().toString(36).substring(3) + Math.random().toString(36).substring(2, 5);
  const me = await (await fetch('/api/me')).json();
  log('me ' + me.user);
  // The presence feed: three events, then the page closes the stream.
  await new Promise((done) => {
    const es = new EventSource('/events');
    let n = 0;
    for (const type of ['presence', 'typing', 'tick']) es.addEventListener(type, (ev) => { log(type + ' ' + ev.data); if (++n === 3) { es.close(); done(); } });
  });
  const poll = '/socket.io/?EIO=4&transport=polling';
  const open = await (await fetch(poll + '&t=' + t())).text();
  const sid = JSON.parse(open.slice(1)).sid;
  await fetch(poll + '&t=' + t() + '&sid=' + sid, { method: 'POST', body: '40', headers: { 'content-type': 'text/plain;charset=UTF-8' } });
  log('connect ' + (await (await fetch(poll + '&t=' + t() + '&sid=' + sid)).text()).slice(0, 2));
  // The long poll the client keeps open; the upgrade answers it with a noop.
  const pending = fetch(poll + '&t=' + t() + '&sid=' + sid).then((r) => r.text());
  // Let the poll reach the server first, so the two runs record the same order.
  await new Promise((r) => setTimeout(r, 100));
  const ws = new WebSocket('ws://' + location.host + '/socket.io/?EIO=4&transport=websocket&sid=' + sid);
  const inbox = [];
  let wake = () => {};
  ws.onmessage = (ev) => { inbox.push(String(ev.data)); wake(); };
  const next = async () => { while (inbox.length === 0) await new Promise((r) => (wake = r)); return inbox.shift(); };
  await new Promise((r) => (ws.onopen = r));
  ws.send('2probe');
  log(await next());
  log('poll ' + (await pending));
  ws.send('5');
  ws.send('42' + JSON.stringify(['join', { room: 'lobby' }]));
  log(await next());
  ws.send('420' + JSON.stringify(['send', { room: 'lobby', text: 'hi all' }]));
  log(await next());
  log(await next());
  ws.send('41');
  ws.close(1000, 'bye');
  document.body.dataset.done = '1';
})();
</script></body></html>`;

/** One Engine.IO session: packets waiting for a poll, the poll waiting for packets. */
interface EioSession {
  outbox: string[];
  waiting?: http.ServerResponse;
  upgraded: boolean;
  socketId: string;
}

const nanoid = nanoId;
const eioId = () => randomBytes(15).toString('base64url');

/** Starts the chat app on 127.0.0.1:0 (closed by `cleanups`); its base URL. Build 2 counts 3 members in `joined` and numbers the SSE tick 4. */
export async function startChatApp(cleanups: Cleanups, build: 1 | 2 = 1): Promise<string> {
  const sessions = new Map<string, EioSession>();
  const flush = (s: EioSession) => {
    if (!s.waiting || (s.outbox.length === 0 && !s.upgraded)) return;
    const res = s.waiting;
    s.waiting = undefined;
    const body = s.upgraded ? '6' : s.outbox.splice(0).join('\x1e');
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
        return res.end(PAGE);
      }
      if (url.pathname === '/api/me') {
        const cookie = `chat_sid=${randomBytes(24).toString('base64url')}; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax`;
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Set-Cookie': cookie });
        return res.end(JSON.stringify({ user: 'ann', room: 'lobby', since: Date.now() - 60_000 }));
      }
      if (url.pathname === '/events') {
        const now = Date.now();
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
        // All three events and the end in one write: the page closing the stream cannot cut the recording short.
        return res.end([
          'retry: 3600000\n\n',
          `id: 1\nevent: presence\ndata: ${JSON.stringify({ user: 'bob', online: true, t: now })}\n\n`,
          `id: 2\nevent: typing\ndata: ${JSON.stringify({ user: 'bob', ts: now + 5 })}\n\n`,
          `id: 3\nevent: tick\ndata: ${JSON.stringify({ n: 3, server: now + 9, seq: build === 1 ? 3 : 4 })}\n\n`,
        ].join(''));
      }
      if (url.pathname === '/socket.io/' && url.searchParams.get('transport') === 'polling') {
        const sid = url.searchParams.get('sid');
        if (!sid) {
          const id = eioId();
          sessions.set(id, { outbox: [], upgraded: false, socketId: eioId() });
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
          return res.end(`0${JSON.stringify({ sid: id, upgrades: ['websocket'], pingInterval: 25000, pingTimeout: 20000, maxPayload: 1000000 })}`);
        }
        const s = sessions.get(sid);
        if (!s) {
          res.writeHead(400, { 'Content-Type': 'application/json' });
          return res.end(JSON.stringify({ code: 1, message: 'Session ID unknown' }));
        }
        if (req.method === 'POST') {
          for (const packet of Buffer.concat(chunks).toString('utf8').split('\x1e')) if (packet === '40') s.outbox.push(`40${JSON.stringify({ sid: s.socketId })}`);
          res.writeHead(200, { 'Content-Type': 'text/html' });
          res.end('ok');
          return flush(s);
        }
        s.waiting = res;
        return flush(s);
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const s = sessions.get(new URL(req.url ?? '/', 'http://x').searchParams.get('sid') ?? '');
    if (!s) return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const emit = (packet: string) => ws.send(packet);
      ws.on('message', (data) => {
        const m = String(data);
        if (m === '2probe') {
          emit('3probe');
          s.upgraded = true;
          return flush(s);
        }
        if (!m.startsWith('42')) return;
        const ack = /^42(\d+)/.exec(m)?.[1];
        const [event, payload] = JSON.parse(m.slice(2 + (ack?.length ?? 0))) as [string, { room: string; text?: string }];
        if (event === 'join') emit(`42${JSON.stringify(['joined', { room: payload.room, members: build === 1 ? 2 : 3, at: Date.now(), msgId: nanoid() }])}`);
        if (event === 'send') {
          const id = nanoid();
          const ts = Date.now();
          emit(`43${ack}${JSON.stringify([{ id, ts }])}`);
          emit(`42${JSON.stringify(['message', { id, room: payload.room, text: payload.text, from: s.socketId, ts }])}`);
        }
      });
      ws.on('error', () => {});
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.add(() => new Promise((r) => { for (const c of wss.clients) c.terminate(); wss.close(); server.closeAllConnections(); server.close(r); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
