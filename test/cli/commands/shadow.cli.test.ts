// bb shadow's flags (cli/commands/shadow.ts). Bad input: each mistake is one
// line that says what to do, exit 2, no stack trace, and nothing is started
// or written. And the flags that shape a run, against real upstreams that
// record what they got: --header per target, --sample-by, --until a
// duration, the live line on a terminal.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { localhostCert } from '../../helpers/localhost-cert.js';
import { runBb, startBb, startBbOnTty } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { recordingUpstream, type RecordingUpstream } from '../../helpers/servers.js';
import type { ShadowReport } from '../../../scenario/index.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const badConfig = tmp.path('bad-config.json');
writeFileSync(badConfig, '{ "normalize": ');
const base = ['shadow', '--primary', 'http://127.0.0.1:9', '--candidate', 'http://127.0.0.1:9', '--out', tmp.path('never')];
const counts = { requests: 6, mirrored: 6, equal: 6, regressions: 0, noise: 0, unclassified: 0, errors: 0, skipped: {} };
const goodReport = {
  format: 1, targets: {}, startedDateTime: '2026-12-07T00:00:00.000Z', endedDateTime: '2026-12-07T00:01:00.000Z', totals: counts,
  routes: { 'GET /a': counts }, latency: { 'GET /a': { primary: { buckets: [0, 6], count: 6 } } }, findings: [], regressionRate: 0,
};

describe('bb shadow: bad input', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['no --candidate', ['shadow', '--primary', 'http://127.0.0.1:9'], /needs --candidate URL/],
    ['a share past 1', [...base, '--sample', '2'], /--sample needs a share between 0 and 1/],
    ['--sample-by without a kind', [...base, '--sample', '0.5', '--sample-by', 'x-user'], /--sample-by needs header:NAME or cookie:NAME/],
    ['an --until that is neither', [...base, '--until', 'soon'], /--until needs a number of requests/],
    ['a --mirror that is not a route', [...base, '--mirror', 'everything'], /--mirror needs safe, all, or routes/],
    ['a --header without its target', [...base, '--header', 'Authorization: x'], /--header needs TARGET:'Name: value'/],
    ['a --fail-on past 1', [...base, '--fail-on', '150%'], /--fail-on needs a share/],
    ['a --merge file that is not there', ['shadow', '--merge', tmp.path('missing.json')], /missing\.json cannot be read \(it does not exist\): give the --json files of bb shadow runs/],
    ['a --ui address other machines could reach', [...base, '--ui', '0.0.0.0:8090'], /--ui must bind a loopback address like 127\.0\.0\.1:0; '0\.0\.0\.0' would show/],
    ['--rotate with --ui (one live view per target)', [...base, '--rotate', '10m', '--ui'], /--ui shows one capture per target: leave out --rotate/],
    ['a --config that is not JSON (refused before the targets are tried)', [...base, '--config', badConfig], /bad-config\.json/],
    ['--listen-tls in front of an http primary', [...base, '--listen-tls'], /--listen-tls needs an https:\/\/ --primary/],
    ['--upstream-ca and --insecure-upstream together', [...base, '--upstream-ca', badConfig, '--insecure-upstream'], /--upstream-ca and --insecure-upstream contradict/],
    ['a --json in a folder that does not exist (said before the run, not after it)', [...base, '--json', tmp.path('no-such-folder', 'r.json')], /cannot write --json .*r\.json \(its folder does not exist\): choose another path/],
    ['a target that is not a URL', ['shadow', '--primary', 'localhost:3000', '--candidate', 'http://127.0.0.1:9', '--out', tmp.path('never')], /--primary needs a URL like http:\/\/127\.0\.0\.1:3000/],
    // Mirrors go to each request's own path: a prefix would be dropped. Said before any target is tried (the primary here is down).
    ['a target with a path', ['shadow', '--primary', 'http://127.0.0.1:9', '--candidate', 'http://127.0.0.1:9/v2', '--out', tmp.path('never')], /--candidate is an origin \(scheme, host, port\) like http:\/\/127\.0\.0\.1:3000, without a path; got 'http:\/\/127\.0\.0\.1:9\/v2'/],
    // A value that starts with '-' is the flag's value, named in its line (before: "Unknown arguments: 5, m").
    ['a negative --until', [...base, '--until', '-5m'], /--until needs a number of requests .* got '-5m'/],
    ['--sample-by without --sample (it would do nothing)', [...base, '--sample-by', 'header:X-User'], /--sample-by picks which users a --sample share keeps: give the share too, like --sample 10% --sample-by header:X-User/],
    ['a --timeout of 0 (every mirror an error)', [...base, '--timeout', '0'], /--timeout needs the ms a mirrored request may take, more than 0/],
    ['a --timeout that is not a number', [...base, '--timeout', 'soon'], /--timeout needs a number of 0 or more, got 'soon'/],
    ['a negative --sample', [...base, '--sample', '-10%'], /--sample needs a share .* got '-10%'/],
    // Reports of the right format but the wrong shape (edited, truncated): before, a TypeError with its stack, or a
    // count that was text added up as text and a route list that was an array dropped.
    ...([
      ['no latency', { latency: undefined }, /latency: histograms by route/],
      ['routes null', { routes: null }, /routes: counts by route/],
      ['routes a list', { routes: [] }, /routes: counts by route/],
      ['a count that is text', { routes: { 'GET /a': { ...counts, requests: '6' } } }, /routes\.GET \/a\.requests: a count/],
      ['a route without skipped', { routes: { 'GET /a': { ...counts, skipped: undefined } } }, /routes\.GET \/a\.skipped: counts by reason/],
      ['histogram buckets as text', { latency: { 'GET /a': { primary: { buckets: 'x', count: 1 } } } }, /latency\.GET \/a\.primary: a histogram/],
      ['a finding without its fields', { findings: [{}] }, /findings\[0\]\.class/],
    ] as const).map(([what, change, message]): [string, string[], RegExp] => {
      const path = tmp.path(`report-${what.replace(/ /g, '-')}.json`);
      writeFileSync(path, JSON.stringify({ ...goodReport, ...change }));
      return [`a --merge report with ${what}`, ['shadow', '--merge', path], new RegExp(`is not a bb shadow report \\(format 1; ${message.source}`)];
    }),
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const run = await runBb(args, env);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
      assert.equal(existsSync(tmp.path('never')), false);
    });
  }
});

describe('bb shadow: an https target bb cannot verify', () => {
  it('is refused at start in one line naming --upstream-ca (exit 2), nothing written; trusted with --upstream-ca, the run starts', async () => {
    const { key, cert, caFile } = await localhostCert(tmp.path('target-ca'));
    let requests = 0;
    const server = https.createServer({ key, cert }, (_req, res) => (requests++, res.end('ok')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
    const target = `https://localhost:${(server.address() as AddressInfo).port}`;
    const noExtra = { ...env, NODE_EXTRA_CA_CERTS: '' };
    const refused = await runBb(['shadow', '--primary', target, '--candidate', target, '--out', tmp.path('untrusted')], noExtra);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /the primary https:\/\/localhost:\d+ has a certificate bb cannot verify \(SELF_SIGNED_CERT_IN_CHAIN\): trust the upstream's CA with --upstream-ca FILE/);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.equal(existsSync(tmp.path('untrusted')), false);
    assert.equal(requests, 0);
    const bb = startBb(['shadow', '--primary', target, '--candidate', target, '--upstream-ca', caFile, '--out', tmp.path('trusted'), '--until', '1', '--quiet'], noExtra, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    const res = await c.request({ method: 'GET', path: '/' });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), 'ok');
    await c.close();
    assert.equal(await bb.exited, 0, bb.stderr());
  });
});

/** A recording upstream, stopped when the file ends. */
async function upstream(): Promise<RecordingUpstream> {
  const u = await recordingUpstream();
  after(() => u.close());
  return u;
}

describe('bb shadow: the flags that shape the mirrors', () => {
  it("--header TARGET:'Name: value' reaches that target only; Host follows each target; --sample-by keeps users whole", async () => {
    const [primary, candidate, secondary] = [await upstream(), await upstream(), await upstream()];
    const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
    const perUser = 2;
    const bb = startBb([
      'shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', tmp.path('flags'), '--json', tmp.path('flags.json'),
      '--header', 'candidate:Authorization: Bearer for-candidate', '--header', 'secondary:X-Env: staging', '--header', 'secondary:Host: secondary.example',
      '--sample', '50%', '--sample-by', 'header:X-User', '--until', String(users.length * perUser), '--quiet',
    ], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    try {
      for (let i = 0; i < perUser; i++) {
        for (const user of users) await (await c.request({ method: 'GET', path: `/items?i=${i}`, headers: { 'x-user': user } })).body.text();
      }
    } finally {
      await c.close();
    }
    const code = await bb.exited;
    assert.ok(code === 0 || code === 1, bb.stderr());
    const report = JSON.parse(readFileSync(tmp.path('flags.json'), 'utf8')) as ShadowReport;
    // The primary got every request as the client sent it: no header meant for a mirror.
    assert.equal(primary.seen.length, users.length * perUser);
    for (const s of primary.seen) {
      assert.equal(s.headers.authorization, undefined);
      assert.equal(s.headers['x-env'], undefined);
    }
    assert.ok(candidate.seen.length > 0, 'some users were sampled in');
    for (const s of candidate.seen) {
      assert.equal(s.headers.authorization, 'Bearer for-candidate');
      assert.equal(s.headers['x-env'], undefined);
      // The client addressed bb shadow itself: each target gets its own authority (the candidate's recording proxy passes it on).
      assert.equal(s.headers.host, new URL(candidate.url).host);
    }
    for (const s of secondary.seen) {
      assert.equal(s.headers.authorization, undefined);
      assert.equal(s.headers['x-env'], 'staging');
      assert.equal(s.headers.host, 'secondary.example');
    }
    // --sample-by: a user is mirrored with all their requests or none.
    const byUser = new Map<string, number>();
    for (const s of candidate.seen) byUser.set(String(s.headers['x-user']), (byUser.get(String(s.headers['x-user'])) ?? 0) + 1);
    for (const [user, n] of byUser) assert.equal(n, perUser, `${user}: ${n} of ${perUser} mirrored`);
    assert.ok(byUser.size < users.length, `a share of ${users.length} users at 50%: ${byUser.size}`);
    assert.deepEqual(secondary.seen.map((s) => s.url), candidate.seen.map((s) => s.url));
    assert.equal(report.totals.mirrored, candidate.seen.length);
    assert.equal(report.totals.mirrored + (report.totals.skipped['sampled out'] ?? 0), report.totals.requests);
    // The captures are redacted as bb capture's: the token the candidate got is a keyed hash in its capture, and nowhere in clear.
    const candidateHar = readFileSync(tmp.path('flags', 'candidate.har'), 'utf8');
    const auth = (JSON.parse(candidateHar) as { log: { entries: Array<{ request: { headers: Array<{ name: string; value: string }> } }> } }).log.entries
      .map((e) => e.request.headers.find((h) => h.name.toLowerCase() === 'authorization')?.value);
    assert.equal(auth.length, candidate.seen.length);
    for (const v of auth) assert.match(String(v), /^Bearer <redacted:[0-9a-f]+>$/);
    for (const side of ['primary', 'candidate', 'secondary']) assert.doesNotMatch(readFileSync(tmp.path('flags', `${side}.har`), 'utf8'), /for-candidate/, side);
  });

  it('--until N takes N requests from keep-alive clients that keep sending, and no more; each one a client saw failed is not in the capture', async () => {
    const [primary, candidate] = [await upstream(), await upstream()];
    const out = tmp.path('until-n');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', out, '--json', `${out}.json`, '--until', '20', '--quiet'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const answered = new Set<string>();
    let k = 0;
    // Four clients, each sending its next request as soon as the last is answered, until one fails (bounded).
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const c = new Client(url!);
        try {
          while (k < 500) {
            const path = `/k${k++}`;
            try {
              await (await c.request({ method: 'GET', path })).body.text();
              answered.add(path);
            } catch {
              return;
            }
          }
        } finally {
          await c.destroy();
        }
      }),
    );
    assert.equal(await bb.exited, 0, bb.stdout() + bb.stderr());
    const report = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as ShadowReport;
    assert.equal(report.totals.requests, 20, JSON.stringify(report.totals));
    const recorded = (JSON.parse(readFileSync(`${out}/primary.har`, 'utf8')) as { log: { entries: Array<{ request: { url: string } }> } }).log.entries.map((e) => new URL(e.request.url).pathname);
    assert.deepEqual(recorded.sort(), [...answered].sort());
  });

  it('--until DURATION ends a run with no traffic: the report says 0 requests, exit 0', async () => {
    const [primary, candidate] = [await upstream(), await upstream()];
    const run = await runBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', tmp.path('quiet'), '--until', '1s', '--quiet'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^OK: 0 requests, 0 mirrored/m);
  });

  it('on a terminal a live line per route is drawn while the run goes', async () => {
    const [primary, candidate] = [await upstream(), await upstream()];
    const bb = startBbOnTty(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', tmp.path('tty'), '--until', '2'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    try {
      await (await c.request({ method: 'GET', path: '/a' })).body.text();
      // The run needs a second request to end: this line is the live one, not the final table's.
      await bb.waitFor(/GET \/a: 1 request, 1 mirrored \(1 equal, 0 regressions, 0 noise, 0 errors\) · p50\/p99 primary \d+\/\d+ ms, candidate \d+\/\d+ ms/, 30_000);
      assert.doesNotMatch(bb.stdout(), /^OK: /m);
      await (await c.request({ method: 'GET', path: '/b' })).body.text();
    } finally {
      await c.close();
    }
    assert.equal(await bb.exited, 0, bb.stdout());
    assert.match(bb.stdout(), /OK: 2 requests, 2 mirrored/);
  });
});
