// bb replay reads any HAR, not only bb's: every HAR other producers exported
// (Chrome, Firefox, Safari, Charles, Insomnia, mitmproxy's, in the shared
// fixtures) is replayed (replayCapture, what the binary calls) against a catch-all server on
// loopback; what belongs to another origin is skipped with its reason, the
// rest reaches the server, WebSocket client messages included.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import type { Har } from '../../../capture/index.js';
import { replayCapture } from '../../../scenario/index.js';
import { runBb } from '../../helpers/cli.js';
import { sharedFixture } from '../../helpers/fixtures.js';
import { closeHttpAndWs } from '../../helpers/servers.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };

describe('bb replay: HARs other producers exported', () => {
  let requests = 0;
  const wsTexts: string[] = [];
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  // Upgrades are requests too (they never reach the 'request' listener).
  server.on('upgrade', () => requests++);
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (d, binary) => binary || wsTexts.push(d.toString())));
  after(() => closeHttpAndWs(server, wss));

  it('each replays: exit 0, replayed + skipped = its entries, each replayed request reaches the target', async (t) => {
    const fixtures = sharedFixture(t);
    if (!fixtures) return;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const names = (await readdir(fixtures)).filter((n) => n.endsWith('.har') && n !== 'broken.har');
    assert.ok(names.includes('mitmproxy-websocket.har') && names.includes('chrome.har'), names.join(' '));
    for (const name of names) {
      const har: Har = JSON.parse((await readFile(join(fixtures, name), 'utf8')).replace(/^\uFEFF/, ''));
      const before = requests;
      const textsBefore = wsTexts.length;
      // In process (the CLI's own call): twelve bb processes would outlast a loaded machine's file timeout.
      const r = await replayCapture(join(fixtures, name), { target, out: tmp.path(`replay-${name}`), bbHome: tmp.bbHome, waitMs: 300 });
      assert.equal(r.exitCode, 0, `${name}: ${r.line} ${JSON.stringify(r.failed)}`);
      assert.ok(r.replayed >= 1, name);
      assert.equal(r.replayed + r.skipped.length, har.log.entries.length, `${name}: ${JSON.stringify(r.skipped)}`);
      for (const s of r.skipped) assert.match(s.reason, /another origin/, name);
      assert.equal(requests - before, r.replayed, name);
      const sentTexts = har.log.entries.flatMap((e) => (e._webSocketMessages ?? []).filter((m) => m.type === 'send' && m.opcode === 1).map((m) => m.data));
      assert.deepEqual(wsTexts.slice(textsBefore), sentTexts, name);
    }
    assert.ok(wsTexts.length >= 2, 'the mitmproxy WebSocket export sent its client messages');
  });

  it('a file that is not JSON is refused: exit 2, one line', async (t) => {
    const broken = sharedFixture(t, 'broken.har');
    if (!broken) return;
    const run = await runBb(['replay', broken, '--target', 'http://127.0.0.1:9', '--out', tmp.path('broken-replay.har')], env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /broken\.har is not valid JSON/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  });
});
