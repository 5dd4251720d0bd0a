// An exchange only the secondary failed (it hung up on that request): the
// primary and the candidate both answered it. `bb diff primary.har
// candidate.har --noise secondary.har` compares the candidate's answer with
// the primary's and has no noise evidence for it; the live comparison must
// reach the same verdict (issue 37: the live findings and counts are
// `bb diff`'s of the written captures).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Client } from 'undici';
import { startShadow } from '../../../scenario/index.js';
import { diffCaptures } from '../../../diff/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { findingKeys, offlineKeys } from './compared.js';

const tmp = tempDir();
const servers: Server[] = [];
after(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
});

/** A build answering GET /things/N with N and a state; `hangUpOn`: the request number (from 1) whose socket it destroys. */
async function build(state: string, hangUpOn?: number): Promise<string> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    if (++n === hangUpOn) return void req.socket.destroy();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, state }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('bb shadow: an exchange only the secondary failed', () => {
  for (const compare of ['live', 'end'] as const)
  it(`is compared as bb diff --noise compares it: the candidate's change there is a regression, counted as in the captures (compared ${compare})`, async () => {
    const [primary, candidate, secondary] = [await build('open'), await build('pending'), await build('open', 2)];
    const out = tmp.path(`secondary-fails-${compare}`);
    const shadow = await startShadow({ primary, candidate, secondary, outDir: out, bbHome: tmp.bbHome, compare });
    const c = new Client(shadow.url);
    try {
      for (let i = 1; i <= 4; i++) {
        const res = await c.request({ method: 'GET', path: `/things/${i}` });
        assert.equal(res.statusCode, 200);
        await res.body.text();
      }
    } finally {
      await c.close();
    }
    const report = await shadow.close();
    const offline = await diffCaptures(`${out}/primary.har`, `${out}/candidate.har`, { noisePath: `${out}/secondary.har` });
    // bb diff of the captures: the change on all four reads, /things/2 among them (no noise evidence there).
    const change = offline.findings.find((f) => f.pattern === 'response.body.state');
    assert.deepEqual(change && [change.class, change.entries, change.routes], ['real', 4, ['GET /things/1', 'GET /things/2', 'GET /things/3', 'GET /things/4']], JSON.stringify(offline.findings));
    // Live: the same four regressions; the secondary's failure is counted an error all the same, not the candidate's.
    const r = report.routes['GET /things/{id}'];
    assert.deepEqual(r && [r.mirrored, r.equal, r.regressions, r.noise, r.unclassified, r.errors, r.candidateErrors], [4, 0, 4, 0, 0, 1, 0], JSON.stringify(report.routes));
    const live = report.findings.find((f) => f.pattern === 'response.body.state');
    assert.deepEqual(live && [live.class, live.count, live.routes], ['regression', 4, change!.routes], JSON.stringify(report.findings));
    assert.deepEqual(offlineKeys(offline), findingKeys(report));
  });
});
