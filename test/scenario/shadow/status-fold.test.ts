// A candidate that answers 500 on some requests: its error body differs from
// the primary's answer in every field, as a matter of course. `bb diff` of the
// captures folds those fields under the status change (diff/findings-fold.ts:
// one finding, `changed response.status`, with its consequences); the live
// report must list the same findings, not four where bb diff lists one. A
// header the candidate changed on every answer (the 500s too) is a change of
// its own in both.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Client } from 'undici';
import { startShadow, type LiveFinding } from '../../../scenario/index.js';
import { diffCaptures, type Finding } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';

const tmp = tempDir();
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

/** A build answering GET /things/N; the new one fails every third with a 500 and names itself in a header. */
async function build(kind: 'old' | 'new'): Promise<string> {
  const server = createServer((req, res) => {
    const n = Number(/\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0);
    const headers = { 'content-type': 'application/json', 'x-build': kind };
    if (kind === 'new' && n % 3 === 0) {
      res.writeHead(500, headers);
      return void res.end('{"error":"boom"}');
    }
    res.writeHead(200, headers);
    res.end(JSON.stringify({ n, ok: true }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const liveKeys = (list: LiveFinding[]): string[] => list.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern} [${(f.consequences ?? []).map((c) => `${c.kind} ${c.pattern}`).join(', ')}]`).sort();
const offlineKeys = (list: Finding[]): string[] => list.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern} [${(f.consequences ?? []).map((c) => `${c.kind} ${c.pattern}`).join(', ')}]`).sort();

describe('bb shadow: a candidate that answers 500 on some requests', () => {
  it('lists the status change with its consequences folded under it, as bb diff of the captures does', async () => {
    const [primary, candidate, secondary] = [await build('old'), await build('new'), await build('old')];
    const out = tmp.path('e500');
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, reportEveryMs: 50 });
    const client = new Client(shadow.url);
    try {
      for (let i = 1; i <= 9; i++) {
        const res = await client.request({ method: 'GET', path: `/things/${i}` });
        assert.equal(res.statusCode, 200, 'the client gets the primary\'s answer');
        await res.body.text();
      }
    } finally {
      await client.close();
    }
    const report = await shadow.close();
    // Three exchanges failed on the candidate: regressions (compared answers, not mirror errors).
    assert.deepEqual({ regressions: report.totals.regressions, errors: report.totals.errors }, { regressions: 9, errors: 0 });
    assert.deepEqual(liveKeys(report.findings), [
      'real changed response.headers.x-build []',
      'real changed response.status [added response.body.error, removed response.body.n, removed response.body.ok]',
    ]);
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    assert.deepEqual(offlineKeys(offline.findings), liveKeys(report.findings));
  });
});
