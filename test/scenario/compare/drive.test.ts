import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { defineScenario, driveScenario, loadScenario, type ScenarioContext } from '../../../scenario/compare/drive.js';
import { parseSse } from '../../../scenario/compare/http-client.js';
import { isBbError } from '../../../core/index.js';
import { exitStatusFor } from '../../../cli/exit.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

describe('driveScenario', () => {
  let server: Server;
  let baseUrl: string;
  const seen: string[] = [];
  /** How many /slow answers the server has sent (each 2 s after its request). */
  let slowAnswered = 0;

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0];
        seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? ''} ${body}`);
        if (path === '/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        else if (req.url === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
        else if (req.url === '/bin') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2]));
        else if (req.url === '/sse') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('event: started\nid: 1\ndata: {"n":1}\n\n');
          setTimeout(() => res.end('data: line one\ndata: line two\n\n'), 20);
        } else if (req.url === '/slow') setTimeout(() => (slowAnswered++, res.end('late')), 2000);
        else res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 40401 } }));
      });
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => {
      ws.send(JSON.stringify({ type: 'hello' }));
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data));
        ws.send(JSON.stringify({ type: 'noise' }));
        ws.send(JSON.stringify({ type: 'echo', value: msg.value }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const drive = (fn: (t: ScenarioContext) => Promise<void>, steps: string[] = [], stepTimeoutMs?: number) =>
    driveScenario(defineScenario(fn), { baseUrl, label: 'old', ready: { port: 1, token: 'tk' }, step: (n) => steps.push(n), stepTimeoutMs });

  it('marks steps through the callback, in order, and gives the readiness payload', async () => {
    const steps: string[] = [];
    let token: unknown;
    const result = await drive(async (t) => {
      token = t.ready.token;
      await t.step('one', async () => {});
      await t.step('two', async () => {});
    }, steps);
    assert.deepEqual(steps, ['one', 'two']);
    assert.deepEqual(result.steps.map((s) => s.name), ['one', 'two']);
    assert.equal(token, 'tk');
  });

  it('sends JSON bodies and parses responses by media type', async () => {
    await drive(async (t) => {
      const json = await t.http.post('/json', { a: 1 }, { query: { x: 'y z' } });
      assert.deepEqual(json.body, { ok: true });
      assert.equal((await t.http.get('/text')).body, 'hello');
      assert.deepEqual((await t.http.get('/bin')).body, Buffer.from([0, 1, 2]));
      const missing = await t.http.delete('/nope');
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { error: { code: 40401 } });
    });
    assert.ok(seen.includes('POST /json?x=y+z application/json {"a":1}'), seen.join('\n'));
  });

  it('reads an SSE stream to its end and parses its events', async () => {
    await drive(async (t) => {
      const res = await t.http.get('/sse');
      assert.deepEqual(res.events, [
        { event: 'started', data: '{"n":1}', id: '1' },
        { event: 'message', data: 'line one\nline two', id: '1' },
      ]);
    });
  });

  it('resolves ws.next with the next matching message, skipping others', async () => {
    await drive(async (t) => {
      const ws = await t.ws('/socket');
      assert.deepEqual(await ws.next({ type: 'hello' }), { type: 'hello' });
      ws.send({ value: 7 });
      assert.deepEqual(await ws.next((m: any) => m.type === 'echo'), { type: 'echo', value: 7 });
      assert.equal(ws.received.length, 3);
      await ws.close();
    });
  });

  it('fails a step that throws with exit code 2, naming the step', async () => {
    await assert.rejects(
      drive(async (t) => {
        await t.step('create session', async () => {
          await t.http.get('/nope', { expect: 200 });
        });
      }),
      (err: Error & { code?: string }) => {
        assert.ok(isBbError(err), String(err));
        assert.equal(exitStatusFor(err), 2);
        assert.equal(err.code, 'BB_STEP_FAILED');
        assert.match(err.message, /^scenario step "create session" \(old\) failed: GET \/nope answered 404, expected 200/);
        return true;
      },
    );
  });

  it('names the step and what was awaited when a WebSocket message does not come', async () => {
    await assert.rejects(
      drive(async (t) => {
        await t.step('ws replay', async () => {
          const ws = await t.ws('/socket');
          await ws.next({ type: 'replay_done' }, 300);
        });
      }),
      /step "ws replay" \(old\) failed: no message like \{"type":"replay_done"\} on WebSocket \/socket within 300 ms/,
    );
  });

  it('times a step out with a message naming it', async () => {
    const answeredBefore = slowAnswered;
    await assert.rejects(
      drive(async (t) => {
        await t.step('slow call', () => t.http.get('/slow'), { timeoutMs: 300 });
      }),
      /step "slow call" \(old\) failed: did not finish within 300 ms/,
    );
    assert.equal(slowAnswered, answeredBefore, 'the step gave up before the server answered');
  });

  it('reports a failure outside any step', async () => {
    await assert.rejects(
      drive(async () => {
        throw new Error('boom');
      }),
      (err: Error & { code?: string }) => err.code === 'BB_SCENARIO_FAILED' && /outside any step: boom/.test(err.message),
    );
  });

  it('loads a TypeScript scenario module through tsx and runs it', async () => {
    const scenario = await loadScenario(fixture('echo-scenario.ts'));
    assert.equal(scenario.kind, 'bb-scenario');
    const steps: string[] = [];
    await driveScenario(scenario, { baseUrl, label: 'new', ready: {}, step: (n) => steps.push(n) });
    assert.deepEqual(steps, ['greet']);
    assert.deepEqual((globalThis as { bbEchoSeen?: unknown }).bbEchoSeen, { ok: true });
  });

  it('loads a JavaScript module whose default is a bare function', async () => {
    const scenario = await loadScenario(fixture('plain-scenario.mjs'));
    const steps: string[] = [];
    await driveScenario(scenario, { baseUrl, label: 'new', ready: {}, step: (n) => steps.push(n) });
    assert.deepEqual(steps, ['plain']);
  });

  it('refuses a module without a default export, and a missing one, with exit code 2', async () => {
    await assert.rejects(loadScenario(fixture('no-default.mjs')), (e: Error) => isBbError(e) && exitStatusFor(e) === 2 && /no default export/.test(e.message));
    await assert.rejects(loadScenario(fixture('absent.ts')), (e: Error) => isBbError(e) && exitStatusFor(e) === 2 && /does not exist|could not be loaded/.test(e.message));
  });
});

describe('parseSse', () => {
  it('handles CRLF, comments and fields without a space', () => {
    assert.deepEqual(parseSse(': hi\r\nevent:x\r\ndata:1\r\n\r\n'), [{ event: 'x', data: '1' }]);
  });
});
