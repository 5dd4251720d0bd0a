// A client of the small Engine.IO v4 servers of the route-key and trial tests
// (socket.io is no dependency of bb): what socket.io-client 4 sends for one
// session, in its order. The servers answer the poll marked `n=connect` with
// the Socket.IO CONNECT, a later poll with the noop an upgrade leaves, `2probe`
// with `3probe`, `5` (upgrade done) with one `42["chat",…]` event, and close on
// `41`.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { WebSocket } from 'ws';

/** One session at `base`: the polling handshake and CONNECT, (with `noopPoll`) the poll the upgrade answers with a noop, the upgrade and one chat event. */
export async function engineIoSession(base: string, noopPoll: boolean): Promise<void> {
  const eio = `${base}/socket.io/?EIO=4&transport=polling`;
  const open = await fetch(`${eio}&t=${randomBytes(4).toString('hex')}`).then((r) => r.text());
  const sid = (JSON.parse(open.slice(1)) as { sid: string }).sid;
  await fetch(`${eio}&sid=${sid}`, { method: 'POST', body: '40' }).then((r) => r.text());
  await fetch(`${eio}&sid=${sid}&n=connect`).then((r) => r.text());
  if (noopPoll) await fetch(`${eio}&sid=${sid}`).then((r) => r.text());
  const ws = new WebSocket(`${base.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket&sid=${sid}`);
  await once(ws, 'open');
  const got: string[] = [];
  ws.on('message', (m) => got.push(String(m)));
  ws.send('2probe');
  while (!got.includes('3probe')) await once(ws, 'message');
  ws.send('5');
  while (got.length < 2) await once(ws, 'message');
  ws.send('41');
  await once(ws, 'close');
}
