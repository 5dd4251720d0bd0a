// bb shadow past one machine (issue 37 item 9): a real nginx in front of the
// production server mirrors each safe request (its `mirror` directive) to a
// `bb shadow`, which calls its own primary replica, candidate and secondary.
// The clients' answers come from production only (nginx drops the mirror's
// answer); the shadow finds the candidate's changed field and removed header
// as regressions. Two zones, each an nginx with its own shadow, write two
// reports that `bb shadow --merge` adds into one verdict. The nginx config is
// the template docs/shadow-fleet.md shows. Skipped when nginx is not installed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { Client } from 'undici';
import { runBb, startBb } from '../helpers/cli.js';
import { atFileEnd } from '../helpers/cleanups.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/tmp.js';
import { startShadowService, type ShadowService } from '../scenario/shadow/service.js';
import type { ShadowReport } from '../../scenario/index.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const hasNginx = !spawnSync('nginx', ['-v'], { stdio: 'ignore' }).error;

async function service(build: 'old' | 'new'): Promise<ShadowService> {
  const s = await startShadowService(build);
  atFileEnd(() => s.close());
  return s;
}

/**
 * The config docs/shadow-fleet.md shows: proxy to production, mirror safe
 * requests (with their bodies) to bb shadow. Only the listen address, the two
 * upstreams and the temp paths vary.
 */
function nginxConf(o: { dir: string; port: number; production: string; shadow: string }): string {
  return `worker_processes 1;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${o.dir}/body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;

  upstream production { server ${o.production}; }
  upstream bb_shadow { server ${o.shadow}; }

  server {
    listen 127.0.0.1:${o.port};
    location / {
      mirror /_bb_shadow;
      mirror_request_body on;
      proxy_pass http://production;
    }
    location = /_bb_shadow {
      internal;
      # bb shadow's primary replica answers every request it gets: mirror only what is safe to run twice.
      if ($request_method !~ ^(GET|HEAD|OPTIONS)$) { return 204; }
      proxy_set_header Host $host;
      proxy_pass http://bb_shadow$request_uri;
    }
  }
}
`;
}

/** Starts nginx in the foreground as this user (one process, no master), stopped by its pid when the file ends. */
async function startNginx(name: string, production: string, shadow: string): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = tmp.path(name);
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const hostPort = (url: string) => new URL(url).host;
  await tmp.write(`${name}/nginx.conf`, nginxConf({ dir, port, production: hostPort(production), shadow: hostPort(shadow) }));
  // master_process off: the process we spawn is nginx itself (no worker switching to user nobody), so its pid stops it.
  const child = spawn('nginx', ['-p', dir, '-c', `${dir}/nginx.conf`, '-g', `daemon off; master_process off; pid ${dir}/nginx.pid; error_log stderr;`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  atFileEnd(stop);
  for (const start = Date.now(); ; ) {
    const ok = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => (s.end(), r(true)));
      s.once('error', () => r(false));
    });
    if (ok) break;
    if (child.exitCode !== null || Date.now() - start > 15_000) throw new Error(`nginx did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}

/** One zone: production behind nginx, and a bb shadow with its own primary replica, candidate (new build) and secondary. */
async function zone(name: string, requests: number) {
  const [production, primary, candidate, secondary] = [await service('old'), await service('old'), await service('new'), await service('old')];
  const json = tmp.path(`${name}.json`);
  const out = tmp.path(`${name}-captures`);
  // No config: the client's Host as nginx sent it (shop.example) reaches the primary replica and the mirrors alike.
  const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', out, '--json', json, '--until', String(requests), '--quiet'], env, { timeoutMs: 60_000 });
  const [, shadowUrl] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
  const nginx = await startNginx(`${name}-nginx`, production.url, shadowUrl!);
  return { production, primary, candidate, secondary, bb, json, out, nginx, shadowUrl: shadowUrl! };
}

/** Sends `n` GET /items and one POST through nginx; returns what the client got. */
async function drive(url: string, n: number): Promise<Array<{ status: number; servedBy: unknown; total: number }>> {
  const c = new Client(url);
  const seen: Array<{ status: number; servedBy: unknown; total: number }> = [];
  try {
    for (let i = 0; i < n; i++) {
      const res = await c.request({ method: 'GET', path: `/items?page=${i}`, headers: { host: 'shop.example' } });
      const body = JSON.parse(await res.body.text()) as { total: number };
      seen.push({ status: res.statusCode, servedBy: res.headers['x-served-by'], total: body.total });
    }
    const post = await c.request({ method: 'POST', path: '/items', headers: { host: 'shop.example', 'content-type': 'application/json' }, body: '{"name":"x"}' });
    assert.equal(post.statusCode, 201);
    await post.body.text();
  } finally {
    await c.close();
  }
  return seen;
}

describe('bb shadow behind a real nginx mirror', { skip: hasNginx ? false : 'nginx is not installed (apt-get install nginx)' }, () => {
  it('nginx answers from production, mirrors safe requests to bb shadow, which finds the regressions; two zones merge into one verdict', async () => {
    const a = await zone('zone-a', 5);
    const b = await zone('zone-b', 3);
    const seenA = await drive(a.nginx.url, 5);
    const seenB = await drive(b.nginx.url, 3);

    // The clients' answers are production's (the old build): nginx drops the mirror's answer.
    for (const s of [...seenA, ...seenB]) assert.deepEqual(s, { status: 200, servedBy: 'catalog', total: 1 });
    assert.equal(a.production.hits.get('GET /items'), 5);
    assert.equal(b.production.hits.get('POST /items'), 1);

    const codeA = await a.bb.exited;
    const codeB = await b.bb.exited;
    await a.nginx.stop();
    await b.nginx.stop();
    assert.equal(codeA, 1, `exit 1 on regressions\n${a.bb.stdout()}\n${a.bb.stderr()}`);
    assert.equal(codeB, 1, b.bb.stderr());

    const reportA = JSON.parse(await readFile(a.json, 'utf8')) as ShadowReport;
    const reportB = JSON.parse(await readFile(b.json, 'utf8')) as ShadowReport;
    for (const [r, n] of [[reportA, 5], [reportB, 3]] as const) {
      // Every GET reached bb shadow; the POST stopped at nginx's method check.
      assert.equal(r.totals.requests, n, JSON.stringify(r.totals));
      assert.equal(r.totals.mirrored, n);
      assert.deepEqual(r.totals.skipped, {});
      assert.equal(r.totals.regressions, n);
      assert.equal(r.totals.errors, 0);
      assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), ['regression changed response.body.total', 'regression removed response.headers.x-served-by']);
    }
    for (const z of [a, b]) {
      assert.equal(z.primary.hits.get('POST /items') ?? 0, 0);
      assert.equal(z.candidate.hits.get('POST /items') ?? 0, 0);
    }
    assert.equal(a.candidate.hits.get('GET /items'), 5);

    // nginx's mirror keeps the client's Host with `proxy_set_header Host $host` (no -shadow suffix, unlike Envoy and Istio).
    // bb shadow keeps that Host on the mirrors too (it does not name bb shadow itself), so no exchange differs on it.
    for (const side of ['primary', 'candidate', 'secondary']) {
      const har = JSON.parse(await readFile(`${a.out}/${side}.har`, 'utf8')) as { log: { entries: Array<{ request: { headers: Array<{ name: string; value: string }> } }> } };
      const hosts = new Set(har.log.entries.map((e) => e.request.headers.find((h) => h.name.toLowerCase() === 'host')?.value));
      assert.deepEqual([...hosts], ['shop.example'], side);
    }

    // The two zones' reports add up into one verdict: exit 1, counts and findings summed.
    const merged = tmp.path('merged.json');
    const run = await runBb(['shadow', '--merge', a.json, b.json, '--json', merged], env);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^REGRESSIONS: merged 2 reports, 8 mirrored, 8 with regressions/);
    const m = JSON.parse(await readFile(merged, 'utf8')) as ShadowReport;
    assert.equal(m.merged, 2);
    assert.equal(m.totals.requests, 8);
    assert.equal(m.totals.regressions, 8);
    assert.deepEqual(m.findings.map((f) => f.count), [8, 8]);
    assert.equal(m.latency['GET /items']?.candidate?.count, 8);
    // A loose enough --fail-on lets the same merged evidence pass.
    const lenient = await runBb(['shadow', '--merge', a.json, b.json, '--fail-on', '100%'], env);
    assert.equal(lenient.code, 0, lenient.stdout + lenient.stderr);
  });
});
