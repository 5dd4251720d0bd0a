// The live view's ratify actions (scenario/shadow/shadow-ui.ts) on findings the
// run keeps only part of: a value past SAMPLE_VALUE_MAX characters (its samples
// hold it elided) and a finding on more routes than MAX_ROUTES_PER_FINDING. An
// entry written from that part would name values that never occur, or too few
// routes; the action refuses in one sentence that says how to ratify it from
// the captures, and writes nothing. Real bb (bin/bb.js), real servers, real
// HTTP requests to the live view as the page makes them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startBb } from '../../helpers/cli.js';
import { liveViewUrl } from '../../helpers/live-view.js';
import { tempDir } from '../../helpers/tmp.js';
import { MAX_ROUTES_PER_FINDING, SAMPLE_VALUE_MAX } from '../../../scenario/shadow/live.js';

const tmp = tempDir();
const servers: http.Server[] = [];
after(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
});

/** A route name per index, letters only (a digit in a path segment could be read as an id). */
const routeName = (i: number) => `/route-${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}`;
const ROUTES = MAX_ROUTES_PER_FINDING + 5;

/** One build: /long answers a value longer than the live view keeps, every route of routeName a short `v`; both end in `mark`. */
async function build(mark: string): Promise<string> {
  const server = http.createServer((req, res) => {
    const body = req.url === '/long' ? { long: `${'L'.repeat(SAMPLE_VALUE_MAX * 3)}${mark}` } : { v: mark };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('the live view refuses to ratify a finding it keeps only part of (elided values, routes past the cap), and writes nothing', async () => {
  const config = tmp.path('bb.config.json');
  const bb = startBb(['shadow', '--primary', await build('p'), '--candidate', await build('c'), '--out', tmp.path('run'), '--config', config, '--ui'], { BB_HOME: tmp.bbHome }, { timeoutMs: 120_000 });
  try {
    const proxy = (await bb.waitFor(/clients → (http:\/\/\S+)/, 30_000))[1]!;
    const ui = await liveViewUrl(bb);
    const origin = ui.replace(/\/$/, '');
    const token = ((await (await request(ui + 'api/views')).body.json()) as { token: string }).token;
    await (await request(`${proxy}/long`)).body.text();
    for (let i = 0; i < ROUTES; i++) await (await request(proxy + routeName(i))).body.text();
    /** Asks the known action to ratify the unclassified finding at `pattern`, until the run has compared it. */
    const ratify = async (pattern: string): Promise<{ status: number; error: string }> => {
      for (let i = 0; ; i++) {
        const res = await request(ui + 'action/known', {
          method: 'POST',
          headers: { origin, 'content-type': 'application/json', 'x-bb-token': token },
          body: JSON.stringify({ class: 'unclassified', kind: 'changed', pattern, reason: 'looked at it' }),
        });
        const answer = (await res.body.json()) as { error?: string };
        if (!/the run has no/.test(answer.error ?? '') || i === 300) return { status: res.statusCode, error: answer.error ?? '' };
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const long = await ratify('response.body.long');
    assert.equal(long.status, 400, long.error);
    assert.match(long.error, new RegExp(`values are longer than the live view keeps \\(${SAMPLE_VALUE_MAX} characters\\): ratify it from the run's captures: bb diff .* --json report\\.json, then bb known add FINDING-ID --from report\\.json`));
    const spread = await ratify('response.body.v');
    assert.equal(spread.status, 400, spread.error);
    assert.match(spread.error, new RegExp(`on more than ${MAX_ROUTES_PER_FINDING} routes and the live view keeps the first ${MAX_ROUTES_PER_FINDING}: ratify it from the run's captures`));
    assert.equal(existsSync(config), false, 'a config was written');
  } finally {
    bb.child.kill('SIGINT');
    await bb.exited;
  }
});
