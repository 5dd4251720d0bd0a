// An event stream whose event does not end for hundreds of megabytes (one
// `data:` line, a server bug or a hostile peer): bb shadow reads each event
// as it crosses to bind the values it issues, and its parser held the event
// a character at a time, so 800 MB of it took the process past V8's heap and
// the primary's clients with it. The real bb binary with a 96 MiB heap, a
// 200 MB event from both targets: the client gets every byte, the run ends
// as it should (a verdict, no error) and its captures are written.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const servers: http.Server[] = [];
after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

const PIECE = 'x'.repeat(64 * 1024);
const PIECES = 3200; // 200 MiB

/** An event stream of one event whose data line is 200 MiB, then a short one. */
async function endlessEvent(): Promise<string> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('data: ');
    let left = PIECES;
    const pump = (): void => {
      while (left > 0) {
        left--;
        if (!res.write(PIECE)) return void res.once('drain', pump);
      }
      res.end('\n\ndata: after\n\n');
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('bb shadow: an event of hundreds of megabytes', () => {
  it('relays it whole with a 96 MiB heap, and the run ends and writes its captures', async () => {
    const out = tmp.path('endless');
    const json = tmp.path('endless.json');
    const bb = startBb(
      ['shadow', '--primary', await endlessEvent(), '--candidate', await endlessEvent(), '--out', out, '--json', json, '--until', '1'],
      { BB_HOME: tmp.bbHome, NODE_OPTIONS: '--max-old-space-size=96' },
      { timeoutMs: 120_000 },
    );
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const res = await fetch(`${url}/events`);
    let bytes = 0;
    let tail = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      tail = (tail + Buffer.from(chunk).toString('latin1')).slice(-64);
    }
    assert.equal(bytes, 'data: '.length + PIECES * PIECE.length + '\n\ndata: after\n\n'.length);
    assert.ok(tail.endsWith('\n\ndata: after\n\n'));
    const code = await bb.exited;
    // A verdict (the candidate's copy ends with the primary's stream, wherever it had got to), not a crash.
    assert.ok(code === 0 || code === 1, `exit ${code}: ${bb.stderr()}`);
    const report = JSON.parse(await readFile(json, 'utf8')) as { totals: { errors: number } };
    assert.equal(report.totals.errors, 0, JSON.stringify(report.totals));
    const entry = async (side: string) =>
      (JSON.parse(await readFile(`${out}/${side}.har`, 'utf8')) as { log: { entries: Array<{ response: { bodySize: number } }> } }).log.entries[0]!;
    assert.equal((await entry('primary')).response.bodySize, bytes);
    assert.ok((await entry('candidate')).response.bodySize > 0);
  });
});
