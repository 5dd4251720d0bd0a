// Faults: the upstream dies or stalls at each point of an exchange, the
// client hangs up at each phase. Each time the client gets what it should
// (the bytes so far, or bb's 502), the proxy keeps serving, and the HAR keeps
// the exchange as far as it got, marked `_bb.aborted` or `_bb.error`.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rawClient } from '../helpers/raw.js';
import { httpResponse, scriptedUpstream, type ScriptedUpstream, type Step } from '../helpers/scripted-upstream.js';
import { afterHead, parseFrames, upgradeRequest, upgradeResponse, wsFrame, wsKey } from '../helpers/ws-frames.js';
import { Cleanups } from '../helpers/cleanups.js';
import { Steps } from '../helpers/steps.js';
import { get, record, waitUntil, type Recording } from '../helpers/recording.js';
import type { Har, HarEntry } from '../../capture/har.js';

/** One chunk of a chunked body. */
const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

describe('faults on either side of an exchange', () => {
  const cleanups = new Cleanups();
  let upstream: ScriptedUpstream;
  let rec: Recording;
  // The script for each upstream connection, in accept order: one client connection = one upstream connection.
  const scripts: Step[][] = [];
  let har: Har;
  let healthChecks = 0;

  const serve = (script: Step[]): number => scripts.push(script) - 1;
  const answerOnce: Step[] = [{ wait: 'request' }, { send: httpResponse('alive') }, { wait: 'client-end' }, { close: true }];
  /** After each fault: a fresh connection gets a normal answer. */
  const healthy = async (): Promise<void> => {
    serve(answerOnce);
    const r = await get(rec.port, `/health/${healthChecks++}`);
    assert.deepEqual(r, { status: 200, body: 'alive' });
  };
  const entry = (path: string): HarEntry => {
    const e = har.log.entries.find((x) => x.request.url.endsWith(path));
    assert.ok(e, `an entry for ${path}`);
    return e;
  };
  /** Waits until the proxy closed its side of upstream connection i. */
  const upstreamClosed = (i: number) => waitUntil(() => upstream.isClosed(i), `upstream connection ${i} to close`);

  before(async () => {
    upstream = await scriptedUpstream((i) => scripts[i] ?? [{ close: true }]);
    cleanups.add(() => upstream.close());
    rec = await record(cleanups, upstream.url, { upstreamTimeoutMs: 400 });
  });
  after(() => cleanups.run());
  // Each fault is driven once, by its own test or by the HAR test, which needs them all.
  const steps = new Steps();

  it('passes on the bytes so far when the upstream resets mid-body, and records the abort', steps.add(async () => {
    serve([{ wait: 'request' }, { send: 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf of it' }, { wait: 30 }, { reset: true }]);
    const c = await rawClient(rec.port);
    c.send('GET /reset-mid-body HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.closed;
    assert.match(c.bytes().toString('latin1'), /^HTTP\/1\.1 200 OK[\s\S]*half of it$/);
    await healthy();
  }));

  it('closes the client when the upstream half-closes before the Content-Length is reached', steps.add(async () => {
    serve([{ wait: 'request' }, { send: 'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort' }, { halfClose: true }, { wait: 'client-end' }]);
    const c = await rawClient(rec.port);
    c.send('GET /fin-mid-body HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.closed;
    assert.match(c.bytes().toString('latin1'), /short$/);
    await healthy();
  }));

  it('closes the client when a chunked body breaks off, and when it turns to garbage', steps.add(async () => {
    serve([{ wait: 'request' }, { send: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n' }, { wait: 30 }, { reset: true }]);
    const a = await rawClient(rec.port);
    a.send('GET /chunked-reset HTTP/1.1\r\nHost: x\r\n\r\n');
    await a.closed;
    assert.match(a.bytes().toString('latin1'), /hello/);
    assert.doesNotMatch(a.bytes().toString('latin1'), /0\r\n\r\n$/, 'the client is not told the body ended');
    serve([{ wait: 'request' }, { send: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n' }, { garbage: 64, seed: 7 }, { stall: true }]);
    const b = await rawClient(rec.port);
    b.send('GET /chunked-garbage HTTP/1.1\r\nHost: x\r\n\r\n');
    await b.closed;
    await healthy();
  }));

  it('answers 502 when the upstream sends garbage instead of a response, or closes without answering', steps.add(async () => {
    serve([{ wait: 'request' }, { garbage: 300, seed: 3 }, { wait: 'client-end' }]);
    const garbage = await get(rec.port, '/garbage-response');
    assert.equal(garbage.status, 502);
    assert.match(garbage.body, /"error":"bb_upstream_failed"/);
    serve([{ wait: 'request' }, { close: true }]);
    const closed = await get(rec.port, '/closed-before-answer');
    assert.equal(closed.status, 502);
    serve([{ wait: 'request' }, { reset: true }]);
    const reset = await get(rec.port, '/reset-before-answer');
    assert.equal(reset.status, 502);
    await healthy();
  }));

  it('answers 502 after the upstream timeout when the upstream accepts and never answers', steps.add(async () => {
    serve([{ wait: 'request' }, { stall: true }]);
    const started = Date.now();
    const r = await get(rec.port, '/never-answers');
    const took = Date.now() - started;
    assert.equal(r.status, 502);
    // bb's own 400 ms timer ended it (the upstream still holds the connection open), and not before it ran out.
    const { code, message } = JSON.parse(r.body) as { code: string; message: string };
    assert.deepEqual({ code, message }, { code: 'BB_UPSTREAM_TIMEOUT', message: 'the upstream did not answer in time (no data from the upstream for 400 ms)' });
    assert.ok(took >= 350, `timed out after ${took} ms (configured 400)`);
    // A stall in the middle of a body: the client has the head already, so the connection just ends.
    serve([{ wait: 'request' }, { send: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc' }, { stall: true }]);
    const c = await rawClient(rec.port);
    c.send('GET /stalls-mid-body HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.closed;
    assert.match(c.bytes().toString('latin1'), /abc$/);
    await healthy();
  }));

  it('records the events so far when the upstream dies mid-SSE', steps.add(async () => {
    serve([
      { wait: 'request' },
      { send: 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' },
      { send: chunk('event: a\ndata: one\n\n') },
      { wait: 20 },
      { send: chunk('event: b\ndata: two\n\n') },
      { wait: 20 },
      { reset: true },
    ]);
    const c = await rawClient(rec.port);
    c.send('GET /sse-dies HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    await c.closed;
    assert.match(c.bytes().toString('latin1'), /data: two/);
    await healthy();
  }));

  it('records the messages so far when the upstream dies mid-WebSocket, and closes the client', steps.add(async () => {
    const key = wsKey();
    serve([
      { wait: 'head' },
      { send: Buffer.concat([Buffer.from(upgradeResponse(key), 'latin1'), wsFrame({ payload: 'from server 1' })]) },
      // The client's frame first, so the HAR's order is the wire's whatever the machine's load.
      { wait: 'more' },
      { send: wsFrame({ payload: 'from server 2' }) },
      { wait: 30 },
      { reset: true },
    ]);
    const c = await rawClient(rec.port);
    c.send(upgradeRequest('/ws-upstream-dies', 'x', key));
    await waitUntil(() => c.bytes().includes('\r\n\r\n'), 'the 101');
    c.send(wsFrame({ payload: 'from client', mask: true }));
    await c.closed;
    const texts = parseFrames(afterHead(c.bytes())).frames.map((f) => f.payload.toString());
    assert.deepEqual(texts, ['from server 1', 'from server 2']);
    await healthy();
  }));

  it('closes the upstream side whenever the client hangs up: mid-head, mid-body, waiting, mid-response, mid-WebSocket', steps.add(async () => {
    // Mid-head: no request exists yet; the upstream connection a reverse proxy opened at accept
    // (issue 39) gets no byte of the half head and closes with the client.
    const headIndex = serve([{ wait: 'client-end' }]);
    const head = await rawClient(rec.port);
    head.send('GET /client-gone-mid-head HTTP/1.1\r\nHo');
    await new Promise((r) => setTimeout(r, 30));
    head.socket.destroy();
    await upstreamClosed(headIndex);
    assert.equal(upstream.received(headIndex).length, 0, 'nothing of the half head went upstream');

    const phases: Array<{ path: string; script: Step[]; send: string; after: (c: Awaited<ReturnType<typeof rawClient>>) => Promise<void> }> = [
      {
        path: '/client-gone-mid-body',
        script: [{ wait: 'head' }, { wait: 'client-end' }],
        send: 'POST /client-gone-mid-body HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b',
        after: async (_c) => waitUntil(() => upstream.received(upstream.connections() - 1).includes('only ten b'), 'the partial body upstream'),
      },
      {
        path: '/client-gone-waiting',
        script: [{ wait: 'request' }, { wait: 'client-end' }],
        send: 'GET /client-gone-waiting HTTP/1.1\r\nHost: x\r\n\r\n',
        after: async () => new Promise((r) => setTimeout(r, 50)),
      },
      {
        path: '/client-gone-mid-response',
        script: [{ wait: 'request' }, { send: 'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nsome' }, { wait: 'client-end' }],
        send: 'GET /client-gone-mid-response HTTP/1.1\r\nHost: x\r\n\r\n',
        after: async (c) => waitUntil(() => c.bytes().includes('some'), 'the first bytes'),
      },
    ];
    for (const phase of phases) {
      const index = serve(phase.script);
      const c = await rawClient(rec.port);
      c.send(phase.send);
      await phase.after(c);
      c.socket.destroy();
      await upstreamClosed(index);
    }
    const key = wsKey();
    const index = serve([{ wait: 'head' }, { send: upgradeResponse(key) }, { wait: 'client-end' }]);
    const ws = await rawClient(rec.port);
    ws.send(upgradeRequest('/client-gone-mid-ws', 'x', key));
    await waitUntil(() => ws.bytes().includes('\r\n\r\n'), 'the 101');
    ws.send(wsFrame({ payload: 'bye', mask: true }));
    await waitUntil(() => afterHead(upstream.received(index)).length > 0, 'the frame upstream');
    ws.socket.destroy();
    await upstreamClosed(index);
    await healthy();
  }));

  it('keeps each fault in the HAR as far as it got, marked', async (t) => {
    await steps.runAll(t);
    har = await rec.finish();
    const reset = entry('/reset-mid-body');
    assert.equal(reset.response.status, 200);
    assert.equal(reset._bb?.aborted, 'upstream');
    assert.equal(reset.response.content.text, 'half of it');
    assert.equal(entry('/fin-mid-body')._bb?.aborted, 'upstream');
    assert.equal(entry('/chunked-reset')._bb?.aborted, 'upstream');
    assert.equal(entry('/chunked-reset').response.content.text, 'hello');
    assert.ok(entry('/chunked-garbage')._bb?.aborted === 'upstream' || entry('/chunked-garbage')._bb?.error);
    for (const path of ['/garbage-response', '/closed-before-answer', '/reset-before-answer', '/never-answers']) {
      const e = entry(path);
      assert.equal(e.response.status, 502, path);
      assert.ok(e._bb?.error?.code, `${path}: _bb.error`);
    }
    assert.match(entry('/garbage-response')._bb!.error!.code, /^HPE_/);
    assert.equal(entry('/never-answers')._bb!.error!.code, 'BB_UPSTREAM_TIMEOUT');
    assert.equal(entry('/stalls-mid-body')._bb?.aborted, 'upstream');
    const sse = entry('/sse-dies');
    assert.deepEqual(sse._eventSourceMessages?.map((m) => [m.eventName, m.data]), [['a', 'one'], ['b', 'two']]);
    assert.equal(sse._bb?.aborted, 'upstream');
    const ws = entry('/ws-upstream-dies');
    assert.deepEqual(ws._webSocketMessages?.map((m) => [m.type, m.data]), [['receive', 'from server 1'], ['send', 'from client'], ['receive', 'from server 2']]);
    assert.equal(ws._bb?.close?.by, 'none');
    for (const path of ['/client-gone-mid-body', '/client-gone-waiting', '/client-gone-mid-response']) {
      assert.equal(entry(path)._bb?.aborted, 'client', path);
    }
    assert.equal(entry('/client-gone-mid-body').request.postData?.text, 'only ten b');
    assert.equal(entry('/client-gone-mid-response').response.content.text, 'some');
    assert.deepEqual(entry('/client-gone-mid-ws')._webSocketMessages?.map((m) => m.data), ['bye']);
    assert.equal(har.log.entries.filter((e) => e.request.url.includes('/health/')).length, healthChecks);
    assert.ok(har.log.entries.filter((e) => e.request.url.includes('/health/')).every((e) => e.response.content.text === 'alive'));
  });
});
