// A mirrored WebSocket closes as the client closed it: a client's close
// frame with no status code reaches each mirror target with no code too, so
// two identical builds show no difference in the close (bench/shadow.ts's
// long run found every such conversation reported as a changed ws.close.code
// and an extra close frame when the mirror sent 1000 instead).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startShadow } from '../../../scenario/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** Talks one chat conversation through `url` and closes it with `code` (none: a close frame with no status). */
async function chat(url: string, code?: number): Promise<void> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/chat`);
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => ws.send('hello'));
    ws.once('message', () => (code === undefined ? ws.close() : ws.close(code)));
    ws.once('close', () => resolve());
  });
}

describe('shadow mirror: WebSocket close', () => {
  for (const code of [undefined, 4001]) {
    it(`a client's close ${code === undefined ? 'with no status code' : `with code ${code}`} reaches the candidate as sent: identical builds compare equal`, async () => {
      const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
      services.push(primary, candidate);
      const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path(`close-${code ?? 'none'}`), bbHome: tmp.bbHome });
      await chat(shadow.url, code);
      // The mirror's side closes a moment after the client's.
      await new Promise((r) => setTimeout(r, 300));
      const report = await shadow.close(2_000);
      assert.equal(report.totals.mirrored, 1);
      assert.deepEqual(report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), [], JSON.stringify(report.findings));
      assert.equal(report.totals.equal, 1, JSON.stringify(report.totals));
      // Each thread's memory, the comparison worker's as its last report said (the benchmark's per-thread figures).
      const memory = shadow.memory();
      assert.ok(memory.main.heapUsed > 0 && memory.compare!.heapUsed > 0 && memory.compare!.peakHeapUsed >= memory.compare!.heapUsed, JSON.stringify(memory));
    });
  }
});
