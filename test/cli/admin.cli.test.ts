// The admin endpoint (cli/admin.ts) against web pages in the user's browser
// (issue 34 item 14). A page cannot read the endpoint's answers (another
// origin), but a `text/plain` POST needs no preflight, and DNS rebinding
// (a name the page's author controls, answered with 127.0.0.1) makes the
// endpoint same-origin with the page. So bb answers only requests addressed
// to a loopback Host with its own port and carrying no foreign Origin; the
// rest get 403 before any route runs: no step, no /status.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { rawClient } from '../helpers/raw.js';
import { helloServer } from '../helpers/servers.js';
import { CHROMIUM, chromiumLaunchOptions } from '../helpers/browser-app.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir().dir;
const out = join(dir, 'admin.har');
let upstream: http.Server;
let bb: BbProcess;
let port: number;
/** Steps a loopback client was allowed to add, in order: the HAR's pages must be exactly these. */
const allowed: string[] = [];

before(async () => {
  const hello = await helloServer();
  upstream = hello.server;
  bb = startBb(['capture', '--target', `http://127.0.0.1:${hello.port}`, '--out', out, '--admin', '127.0.0.1:0', '--quiet'], { BB_HOME: join(dir, 'home') }, { timeoutMs: 90_000 });
  port = Number((await bb.waitFor(/admin: http:\/\/127\.0\.0\.1:(\d+)/))[1]);
});
after(async () => {
  if (bb.child.exitCode === null) bb.child.kill('SIGKILL');
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

/** Sends one request with exactly these head lines (raw bytes: any Host, no Host, any Origin) and reads the answer. */
async function ask(head: string[], body = ''): Promise<{ status: number; body: string }> {
  const c = await rawClient(port);
  c.send([...head, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
  await c.closed;
  const text = c.bytes().toString('utf8');
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

/** A text/plain POST /step, as a page's `fetch(…, {mode: 'no-cors'})` sends it. */
const postStep = (name: string, host: string | undefined, origin?: string) =>
  ask(['POST /step HTTP/1.1', ...(host === undefined ? [] : [`Host: ${host}`]), ...(origin === undefined ? [] : [`Origin: ${origin}`]), 'Content-Type: text/plain;charset=UTF-8'], JSON.stringify({ name }));

/** Pages begun so far, read by a plain loopback client. */
async function pages(): Promise<number> {
  const r = await ask(['GET /status HTTP/1.1', `Host: 127.0.0.1:${port}`]);
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { captures: Array<{ pages: number }> }).captures[0]!.pages;
}

/** Asserts a 403 whose body is one line of JSON with a reason. */
function assertRefused(r: { status: number; body: string }, what: string): void {
  assert.equal(r.status, 403, `${what}: ${r.body}`);
  assert.equal(r.body.trimEnd().split('\n').length, 1, r.body);
  assert.match((JSON.parse(r.body) as { error: string }).error, /^refused: /, what);
  assert.doesNotMatch(r.body, /captures/, `${what}: nothing of /status leaks`);
}

test('a DNS-rebinding Host (or any name but loopback) gets 403 on every route and adds no step', async () => {
  const before = await pages();
  const foreign = [`127.0.0.1.nip.io:${port}`, `rebind.example:${port}`, `localhost.example:${port}`, `127.0.0.1:${port}@evil.example`, `127.0.0.1:${port + 1}`, `[::1]:${port + 1}`, `0.0.0.0:${port}`];
  for (const host of foreign) {
    assertRefused(await postStep(`rebound ${host}`, host), `POST /step with Host ${host}`);
    assertRefused(await ask(['GET /status HTTP/1.1', `Host: ${host}`]), `GET /status with Host ${host}`);
    assertRefused(await ask(['GET /nowhere HTTP/1.1', `Host: ${host}`]), `GET /nowhere with Host ${host}`);
  }
  assertRefused(await ask(['GET /status HTTP/1.0']), 'an HTTP/1.0 request without Host');
  assertRefused(await ask(['GET /status HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Host: rebind.example']), 'two Host headers');
  assert.equal(await pages(), before, 'no step was added');
});

test('a foreign Origin gets 403 for a text/plain POST /step, even with a loopback Host', async () => {
  const before = await pages();
  for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${port + 1}`, `http://rebind.example:${port}`, `https://127.0.0.1:${port}`, `http://127.0.0.1:${port}/`]) {
    assertRefused(await postStep(`foreign origin ${origin}`, `127.0.0.1:${port}`, origin), `Origin ${origin}`);
    assertRefused(await ask(['GET /status HTTP/1.1', `Host: 127.0.0.1:${port}`, `Origin: ${origin}`]), `GET /status with Origin ${origin}`);
  }
  assert.equal(await pages(), before, 'no step was added');
});

test('loopback clients work as before: 127.0.0.0/8, localhost, [::1], with or without the port, no Origin or its own', async () => {
  const cases: Array<[string, string | undefined]> = [
    [`127.0.0.1:${port}`, undefined],
    [`localhost:${port}`, undefined],
    ['127.0.0.1', undefined],
    [`[::1]:${port}`, undefined],
    [`LOCALHOST.:${port}`, undefined],
    [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
    [`localhost:${port}`, `http://localhost:${port}`],
  ];
  const before = await pages();
  for (const [i, [host, origin]] of cases.entries()) {
    const name = `step ${i}`;
    const r = await postStep(name, host, origin);
    assert.equal(r.status, 200, `Host ${host}, Origin ${origin}: ${r.body}`);
    allowed.push(name);
  }
  assert.equal(await pages(), before + cases.length);
  // undici's fetch, as the docs' curl and scenario drivers do it.
  const step = await fetch(`http://127.0.0.1:${port}/step`, { method: 'POST', body: JSON.stringify({ name: 'by fetch' }) });
  assert.equal(step.status, 200, await step.text());
  allowed.push('by fetch');
});

test('headless chromium: neither another loopback origin nor a rebound name can add a step or read /status', async (t) => {
  if (!CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const before = await pages();
  // Another origin on this machine: a page served from another loopback port.
  const other = http.createServer((_req, res) => res.end('<!doctype html><title>other origin</title>'));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  // DNS rebinding, without DNS: chromium resolves rebind.test to 127.0.0.1, as a rebinding server would answer.
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch(chromiumLaunchOptions(['--host-resolver-rules=MAP rebind.test 127.0.0.1']));
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    const sent = await page.evaluate(async (admin) => {
      const r = await fetch(`${admin}/step`, { method: 'POST', mode: 'no-cors', body: JSON.stringify({ name: 'from another origin' }) });
      return r.type;
    }, `http://127.0.0.1:${port}`);
    const afterNoCors = await pages();

    await page.goto(`http://rebind.test:${port}/`);
    const rebound = await page.evaluate(async () => {
      const status = await fetch('/status');
      const step = await fetch('/step', { method: 'POST', body: JSON.stringify({ name: 'rebound' }) });
      return { status: status.status, statusBody: await status.text(), step: step.status };
    });
    assert.equal(sent, 'opaque', 'the request went out (the page cannot see the answer)');
    assert.equal(afterNoCors, before, 'a no-cors POST from another origin adds no step');
    assert.equal(rebound.status, 403, rebound.statusBody);
    assert.doesNotMatch(rebound.statusBody, /captures/, 'the rebound page reads nothing of /status');
    assert.equal(rebound.step, 403);
    assert.equal(await pages(), before, 'the rebound page adds no step');
  } finally {
    await browser?.close();
    other.closeAllConnections();
    await new Promise((r) => other.close(r));
  }
});

test('the HAR holds exactly the steps loopback clients added', async () => {
  bb.child.kill('SIGTERM');
  assert.equal(await bb.exited, 0, bb.stderr());
  const har = JSON.parse(readFileSync(out, 'utf8')) as { log: { pages?: Array<{ title: string }> } };
  assert.deepEqual((har.log.pages ?? []).map((p) => p.title), allowed);
  assert.equal(bb.stdout().includes('refused'), false, 'a refused admin request is recorded nowhere, not even the live log');
});
