// The demo's scenario: drives every wire surface of the demo service once.
// bb runs it against each server's proxy in turn; the proxy records, so the
// checks here only make sure the run is on track (a failed check fails the
// run with exit 2 naming the step), not that old and new agree.
import { randomUUID } from 'node:crypto';
import { defineScenario } from '../drive.js';

interface SessionBody {
  id: string;
  title: string;
  cursor: number;
}

type Msg = Record<string, any>;
const isEvent = (type: string) => (m: Msg) => m.type === 'event' && m.payload?.type === type;

export default defineScenario(async (t) => {
  await t.step('meta', async () => {
    await t.http.get('/v1/meta', { expect: 200 });
  });

  const a = await t.step('create session', async () => {
    const created = (await t.http.post('/v1/sessions', { title: 'Alpha' }, { expect: 201 })).body as SessionBody;
    await t.http.get('/v1/sessions', { expect: 200 });
    await t.http.get(`/v1/sessions/${created.id}`, { expect: 200 });
    return created;
  });

  const live = await t.step('ws subscribe', async () => {
    const ws = await t.ws('/v1/ws');
    await ws.next({ type: 'hello' });
    ws.send({ type: 'subscribe', session_id: a.id, cursor: a.cursor });
    await ws.next({ type: 'subscribed' });
    return ws;
  });

  await t.step('prompt', async () => {
    const res = await t.http.post(`/v1/sessions/${a.id}/prompts`, { text: 'say something' }, { expect: 200 });
    if (res.events?.at(-1)?.event !== 'prompt.completed') throw new Error('the prompt stream did not end with prompt.completed');
    await live.next(isEvent('prompt.completed'));
    await t.http.get(`/v1/sessions/${a.id}/transcript`, { expect: 200 });
  });

  await t.step('rename', async () => {
    await t.http.patch(`/v1/sessions/${a.id}`, { title: 'Alpha, renamed' }, { expect: 200 });
    await live.next(isEvent('session.renamed'));
  });

  const b = await t.step('fork', async () => {
    const fork = (await t.http.post(`/v1/sessions/${a.id}/fork`, undefined, { expect: 201 })).body as SessionBody;
    await live.next(isEvent('session.fork_created'));
    await t.http.get('/v1/sessions', { expect: 200 });
    return fork;
  });

  await t.step('export', async () => {
    const res = await t.http.get(`/v1/sessions/${a.id}/export`, { expect: 200 });
    if (!Buffer.isBuffer(res.body) || res.body.readUInt32LE(0) !== 0x04034b50) throw new Error('the export is not a zip');
  });

  await t.step('archive', async () => {
    await t.http.post(`/v1/sessions/${b.id}/archive`, undefined, { expect: 200 });
    await t.http.get('/v1/sessions', { query: { archived: true }, expect: 200 });
  });

  await t.step('errors', async () => {
    // An id nobody created: the 40401 envelope (the ratified difference lives here).
    await t.http.post(`/v1/sessions/session_${randomUUID()}/prompts`, { text: 'anyone?' }, { expect: 404 });
    await t.http.get(`/v1/sessions/${b.id}`, { expect: 410 });
  });

  await t.step('restore', async () => {
    await t.http.post(`/v1/sessions/${b.id}/restore`, undefined, { expect: 200 });
    await t.http.get('/v1/sessions', { expect: 200 });
  });

  await t.step('ws replay', async () => {
    const head = ((await t.http.get(`/v1/sessions/${a.id}`, { expect: 200 })).body as SessionBody).cursor;
    const ws = await t.ws('/v1/ws');
    await ws.next({ type: 'hello' });
    ws.send({ type: 'replay', session_id: a.id, cursor: head - 3 });
    const done = await ws.next({ type: 'replay_done' });
    if (done.count !== 3) throw new Error(`replay from ${head - 3} returned ${done.count} events, expected 3`);
    ws.send({ type: 'subscribe', session_id: a.id, cursor: head + 1000 });
    await ws.next({ type: 'resync_required' });
    ws.send({ type: 'ping' });
    await ws.next({ type: 'pong' });
    await ws.close();
  });

  await t.step('connections', async () => {
    await t.http.get('/v1/connections', { expect: 200 });
    await live.close();
  });
});
