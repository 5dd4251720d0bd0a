// bb's HTTP/1.1 parser against Node's (llhttp), on the same bytes: the
// hardening corpus and seeded fuzz of valid and near-valid messages go to a
// real node:http server (requests) and a real node:http client (responses)
// over loopback, and to bb's parser. Where the two disagree bb must be the
// one refusing: bb never completes a message Node refuses or frames
// differently, and when both accept they find the same messages.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setImmediate as tick } from 'node:timers/promises';
import { parsePieces, type ParsedMessage, type Parsed } from '../../helpers/http1.js';
import { requestCorpus, responseCorpus, fuzzRequests, fuzzResponses, type FuzzCase, type ResponseCase } from '../../helpers/http1-fuzz.js';
import { MAX_RESPONSE_HEAD_BYTES } from '../../../proxy/http1/parser.js';

/** What Node made of some bytes. */
interface NodeView {
  messages: Array<ParsedMessage & { keepAlive: boolean }>;
  /** Node refused the bytes (clientError / 'error', or its own 4xx). */
  refused: boolean;
}

/** A node:http server that records each request it is given, one case at a time. */
async function recordingServer(): Promise<{ port: number; run: (bytes: Buffer) => Promise<NodeView>; close: () => Promise<void> }> {
  let view: NodeView = { messages: [], refused: false };
  // req.complete is set the moment llhttp finishes a message; 'end' may never come if a later one is refused.
  let reqs: http.IncomingMessage[] = [];
  const settle = (): void => view.messages.forEach((m, i) => {
    m.complete = reqs[i]!.complete;
    m.rawTrailers = reqs[i]!.rawTrailers;
  });
  const server = http.createServer((req, res) => {
    reqs.push(req);
    const m = { line: `${req.method} ${req.url} HTTP/${req.httpVersion}`, rawHeaders: req.rawHeaders, body: '', rawTrailers: [] as string[], complete: false, keepAlive: res.shouldKeepAlive };
    view.messages.push(m);
    req.on('data', (d: Buffer) => (m.body += d.toString('latin1')));
    req.on('end', () => res.end());
    req.on('error', () => {});
  });
  server.on('clientError', (_err, socket) => {
    view.refused = true;
    settle();
    socket.destroy();
  });
  let serverSocket: net.Socket | undefined;
  server.on('connection', (s: net.Socket) => (serverSocket = s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const run = async (bytes: Buffer): Promise<NodeView> => {
    view = { messages: [], refused: false };
    reqs = [];
    serverSocket = undefined;
    const client = net.connect(port, '127.0.0.1');
    let replies = '';
    let closed = false;
    client.on('data', (d) => (replies += d.toString('latin1')));
    client.on('error', () => {});
    client.on('close', () => (closed = true));
    await new Promise((r) => client.once('connect', r));
    client.write(bytes);
    // Done when Node has read every byte (it parses synchronously as it reads) or hung up; bounded.
    for (let i = 0; i < 2000 && !closed && (serverSocket?.bytesRead ?? 0) < bytes.length; i++) await new Promise((r) => setTimeout(r, 1));
    for (let i = 0; i < 5; i++) await tick();
    await new Promise((r) => setTimeout(r, 5));
    if (!view.refused) settle();
    client.destroy();
    // Node answers some refusals itself (400 for a missing Host) without calling the handler.
    if (/HTTP\/1\.1 [^2]/.test(replies)) view.refused = true;
    return view;
  };
  return { port, run, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

/** A raw server that answers each connection's request with the case's bytes and closes, and a node:http client reading them. */
async function scriptedServer(): Promise<{ run: (c: ResponseCase) => Promise<NodeView>; close: () => Promise<void> }> {
  let answer = Buffer.alloc(0);
  const server = net.createServer((socket) => {
    let seen = '';
    socket.on('error', () => {});
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (seen.includes('\r\n\r\n')) socket.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const run = (c: ResponseCase): Promise<NodeView> =>
    new Promise((resolve) => {
      answer = c.bytes;
      const view: NodeView = { messages: [], refused: false };
      const req = http.request({ host: '127.0.0.1', port, method: c.method, path: '/', agent: false, maxHeaderSize: MAX_RESPONSE_HEAD_BYTES });
      req.on('response', (res) => {
        const m = { line: `HTTP/${res.httpVersion} ${res.statusCode}${res.statusMessage ? ' ' + res.statusMessage : ''}`, rawHeaders: res.rawHeaders, body: '', rawTrailers: [] as string[], complete: false, keepAlive: true };
        view.messages.push(m);
        res.on('data', (d: Buffer) => (m.body += d.toString('latin1')));
        res.on('end', () => {
          m.complete = true;
          m.rawTrailers = res.rawTrailers;
        });
        res.on('error', () => (view.refused = true));
        res.on('aborted', () => (view.refused = true));
      });
      req.on('error', () => (view.refused = true));
      req.on('close', () => setTimeout(() => resolve(view), 2));
      req.end();
    });
  return { run, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const strip = ({ line, rawHeaders, body, rawTrailers, complete }: ParsedMessage): ParsedMessage => ({ line, rawHeaders, body, rawTrailers, complete });

/**
 * The rule: every message bb completes, Node completed the same way; and
 * when Node read everything cleanly, bb did too (same messages) or refused.
 */
function assertBbNoLaxer(name: string, bb: Parsed, node: NodeView, finalOnly: boolean): void {
  // Node stops reading after a message that closes the connection; compare up to there.
  const stop = node.messages.findIndex((m) => !m.keepAlive);
  const nodeMsgs = (stop >= 0 ? node.messages.slice(0, stop + 1) : node.messages).map(strip);
  // The response side compares final responses only (Node reports 1xx apart).
  const bbAll = finalOnly ? bb.messages.filter((m) => !/^HTTP\/1\.[01] 1(?!01)\d\d/.test(m.line)) : bb.messages;
  // One more than Node has, unless Node stopped: bb completing a message Node refused is the failure to catch.
  const bbMsgs = bbAll.slice(0, nodeMsgs.length + (stop >= 0 ? 0 : 1));
  const show = `${name}\n bb: ${JSON.stringify(bb).slice(0, 600)}\n node: ${JSON.stringify(node).slice(0, 600)}`;
  bbMsgs.forEach((m, i) => {
    if (!m.complete) return;
    const theirs = nodeMsgs[i];
    assert.ok(theirs && theirs.complete, `bb completed message ${i} that Node did not: ${show}`);
    assert.deepEqual(strip(m), theirs, `bb and Node framed message ${i} differently: ${show}`);
  });
  const nodeClean = !node.refused && nodeMsgs.every((m) => m.complete);
  const truncated = stop >= 0;
  if (nodeClean && !truncated && !finalOnly && bb.outcome !== 'error') {
    assert.ok(bb.clean, `Node read every byte as whole messages but bb waits for more: ${show}`);
    assert.equal(bbMsgs.length, nodeMsgs.length, `bb found another number of messages: ${show}`);
  }
  if (finalOnly && nodeClean && nodeMsgs.length === 1 && bb.outcome !== 'error') {
    assert.equal(bbMsgs[0]?.complete, true, `Node read the response whole but bb did not: ${show}`);
  }
}

describe('bb parser against llhttp (node:http) on the same bytes', () => {
  let server: Awaited<ReturnType<typeof recordingServer>>;
  let scripted: Awaited<ReturnType<typeof scriptedServer>>;
  const tally = { bothAccept: 0, bothRefuse: 0, bbStricter: 0 };
  const responseTally = { bothAccept: 0, bothRefuse: 0, bbStricter: 0 };
  before(async () => {
    server = await recordingServer();
    scripted = await scriptedServer();
  });
  after(async () => {
    await server.close();
    await scripted.close();
  });

  const runRequests = async (cases: FuzzCase[]): Promise<void> => {
    for (const c of cases) {
      const node = await server.run(c.bytes);
      const bb = parsePieces('request', [c.bytes]);
      assertBbNoLaxer(c.name, bb, node, false);
      const nodeOk = !node.refused && node.messages.length > 0 && node.messages.every((m) => m.complete);
      if (bb.outcome === 'error') tally[nodeOk ? 'bbStricter' : 'bothRefuse']++;
      else if (nodeOk) tally.bothAccept++;
    }
  };
  const runResponses = async (cases: ResponseCase[]): Promise<void> => {
    for (const c of cases) {
      const node = await scripted.run(c);
      const bb = parsePieces('response', [c.bytes], [c.method], true);
      assertBbNoLaxer(`${c.name} (${c.method})`, bb, node, true);
      const nodeOk = !node.refused && node.messages.length === 1 && node.messages[0]!.complete;
      const bbOk = bb.messages.some((m) => m.complete && !/^HTTP\/1\.[01] 1\d\d/.test(m.line));
      responseTally[nodeOk ? (bbOk ? 'bothAccept' : 'bbStricter') : 'bothRefuse']++;
    }
  };

  it('refuses every request of the hardening corpus that Node refuses, and frames the rest as Node does', async () => {
    await runRequests(requestCorpus);
  });

  it('agrees with Node on 400 seeded valid and near-valid requests, or refuses', async () => {
    await runRequests([...fuzzRequests(21, 200), ...fuzzRequests(2112, 200)]);
    // The fuzz must exercise both sides of the line, or it proves nothing.
    assert.ok(tally.bothAccept >= 40, `only ${tally.bothAccept} cases both accepted`);
    assert.ok(tally.bothRefuse >= 40, `only ${tally.bothRefuse} cases both refused`);
  });

  it('refuses every response of the hardening corpus that Node refuses, and frames the rest as Node does', async () => {
    await runResponses(responseCorpus);
  });

  it('agrees with Node on 300 seeded valid and near-valid responses, or refuses', async () => {
    await runResponses([...fuzzResponses(21, 150), ...fuzzResponses(1121, 150)]);
    assert.ok(responseTally.bothAccept >= 40, `only ${responseTally.bothAccept} cases both accepted`);
    assert.ok(responseTally.bothRefuse >= 20, `only ${responseTally.bothRefuse} cases both refused`);
  });

  after(() => console.log(`# request cases: ${JSON.stringify(tally)}; response cases: ${JSON.stringify(responseTally)}`));
});
