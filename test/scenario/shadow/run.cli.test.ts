// bb shadow end to end: two real builds of a small service on loopback (a
// changed field, a removed header, random ids, a random session cookie), the
// real bb binary in front, a real client (undici, ws). The live findings
// must equal `bb diff` of the captures it wrote; random ids and cookies are
// neither regressions nor noise (the mirrors carry each target's own
// values); a POST reaches only the primary by default; the client never sees
// a byte of the candidate's.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { Client } from 'undici';
import WebSocket from 'ws';
import { runBb, startBb, startBbOnTty } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';
import type { ShadowReport } from '../../../scenario/index.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});
async function service(build: 'old' | 'new'): Promise<ShadowService> {
  const s = await startShadowService(build);
  services.push(s);
  return s;
}

async function get(c: Client, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await c.request({ method: 'GET', path, headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Old, new and old builds behind `bb shadow --until 1` (one exchange), and a WebSocket client of its /chat. */
async function shadowChat(name: string) {
  const [primary, candidate, secondary] = [await service('old'), await service('new'), await service('old')];
  const out = tmp.path(name);
  const json = tmp.path(`${name}.json`);
  const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', out, '--json', json, '--until', '1'], env, { timeoutMs: 60_000 });
  const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
  return { bb, out, json, ws: new WebSocket(url!.replace('http', 'ws') + '/chat') };
}

/** Old, new and old builds behind `bb shadow` with these flags after the targets (on a pseudo-terminal with `tty`), its --json report at `<name>.json`, and the address it prints. */
async function shadowOld3(name: string, flags: string[], tty = false) {
  const [primary, candidate, secondary] = [await service('old'), await service('new'), await service('old')];
  const json = tmp.path(`${name}.json`);
  const args = ['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', tmp.path(name), '--json', json, ...flags];
  const bb = tty ? startBbOnTty(args, env, { timeoutMs: 60_000 }) : startBb(args, env, { timeoutMs: 60_000 });
  const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
  return { bb, json, url: url! };
}

/** The comparable identity of a finding: class, kind, field pattern. */
const liveKeys = (r: ShadowReport) => r.findings.map((f) => `${f.class === 'regression' ? 'real' : f.class} ${f.kind} ${f.pattern}`).sort();

describe('bb shadow: two builds, a secondary, live findings = bb diff of the captures', () => {
  it('finds the changed field and the removed header, follows ids and cookies, mirrors no POST', async () => {
    const [primary, candidate, secondary] = [await service('old'), await service('new'), await service('old')];
    const out = tmp.path('run1');
    const json = tmp.path('run1.json');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', out, '--json', json, '--until', '9'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    const transcript: unknown[] = [];
    try {
      const session = await get(c, '/session');
      const cookie = String(session.headers['set-cookie']).split(';')[0]!;
      for (let i = 0; i < 3; i++) {
        const list = await get(c, '/items');
        transcript.push(list.body);
        const item = await get(c, `/items/${list.body.items[0].id}`);
        assert.equal(item.status, 200);
      }
      const me = await get(c, '/me', { cookie });
      assert.equal(me.status, 200);
      const post = await c.request({ method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
      assert.equal(post.statusCode, 201);
      await post.body.text();
    } finally {
      await c.close();
    }
    const code = await bb.exited;
    assert.equal(code, 1, `exit 1 on regressions\n${bb.stdout()}\n${bb.stderr()}`);
    // The client saw the primary's answers only: the old build's total and header.
    for (const body of transcript) assert.equal((body as { total: number }).total, 1);

    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.requests, 9);
    assert.equal(report.totals.mirrored + Object.values(report.totals.skipped).reduce((a, b) => a + b, 0), report.totals.requests);
    assert.deepEqual(report.totals.skipped, { unsafe: 1 });
    assert.equal(report.totals.errors, 0);
    // The POST reached the primary only.
    assert.equal(primary.hits.get('POST /items'), 1);
    assert.equal(candidate.hits.get('POST /items') ?? 0, 0);
    assert.equal(secondary.hits.get('POST /items') ?? 0, 0);
    // Ids and the session cookie were the candidate's own: no 404, no 401 there.
    assert.equal(report.routes['GET /items/{id}']?.regressions ?? -1, 0, JSON.stringify(report.routes));
    assert.equal(report.routes['GET /me']?.equal, 1, JSON.stringify(report.routes));
    assert.deepEqual(liveKeys(report), ['real changed response.body.total', 'real removed response.headers.x-served-by']);
    assert.equal(report.routes['GET /items']?.regressions, 3);

    // bb diff of the written captures reaches the same verdicts.
    const diff = await runBb(['diff', `${out}/primary.har`, `${out}/candidate.har`, '--noise', `${out}/secondary.har`, '--json', '-'], env);
    assert.equal(diff.code, 1, diff.stderr);
    const result = JSON.parse(diff.stdout) as { findings: Array<{ class: string; kind: string; pattern: string }>; pairs: unknown[] };
    const offline = result.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort();
    assert.deepEqual(offline, liveKeys(report));
    assert.equal(result.pairs.length, report.totals.mirrored);
  });

  it('a WebSocket chat: the client hears the primary only; a changed candidate message is one regression', async () => {
    const { bb, ws, out, json } = await shadowChat('ws');
    const heard: string[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send('hello'));
      ws.on('message', (m) => {
        heard.push(m.toString());
        if (heard.length === 1) ws.send('again');
        if (heard.length === 2) ws.close(1000);
      });
      ws.once('close', () => resolve());
    });
    assert.deepEqual(heard.map((h) => JSON.parse(h).room), ['lobby', 'lobby']);
    const code = await bb.exited;
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(code, 1, bb.stderr());
    assert.equal(report.totals.mirrored, 1);
    assert.equal(report.totals.regressions, 1);
    assert.deepEqual(report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['regression changed ws.messages[].data.room'], JSON.stringify(report.findings));
  });

  it('a long WebSocket chat (past the messages held while open): compared whole, one regression, as bb diff of the captures finds', async () => {
    const { bb, ws, out, json } = await shadowChat('ws-long');
    // 150 round trips: 300 messages a conversation, most of them read back from the journal (capture/entry-assembly.ts WS_HELD).
    let heard = 0;
    await new Promise<void>((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send('m0'));
      ws.on('message', () => {
        heard++;
        if (heard < 150) ws.send(`m${heard}`);
        else ws.close(1000);
      });
      ws.once('close', () => resolve());
    });
    assert.equal(await bb.exited, 1, bb.stderr());
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.mirrored, 1);
    assert.equal(report.totals.regressions, 1);
    // The new build's field in message 140 (past the first 64): the conversation was compared whole.
    assert.equal(liveKeys(report).length, 2, JSON.stringify(report.findings));
    assert.ok(liveKeys(report).some((k) => k.endsWith('ws.messages[].data.late')), JSON.stringify(report.findings));
    assert.ok(liveKeys(report).includes('real changed ws.messages[].data.room'), JSON.stringify(report.findings));
    const diff = await runBb(['diff', `${out}/primary.har`, `${out}/candidate.har`, '--noise', `${out}/secondary.har`, '--json', '-'], env);
    assert.equal(diff.code, 1, diff.stderr);
    const result = JSON.parse(diff.stdout) as { findings: Array<{ class: string; kind: string; pattern: string }> };
    assert.deepEqual(result.findings.filter((f) => f.class !== 'known').map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), liveKeys(report));
  });

  it('a target down at start: one line, exit 2, nothing written', async () => {
    const primary = await service('old');
    const run = await runBb(['shadow', '--primary', primary.url, '--candidate', 'http://127.0.0.1:1', '--out', tmp.path('down'), '--until', '1'], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /candidate http:\/\/127\.0\.0\.1:1 does not accept connections/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  });

  it("bb replay re-drives a shadow's capture: a fresh old build answers each request as the primary did, its own ids and cookie followed, and bb diff of the two matches", async () => {
    const fresh = await service('old');
    const replayed = tmp.path('run1-replayed.har');
    const run = await runBb(['replay', `${tmp.path('run1')}/primary.har`, '--target', fresh.url, '--out', replayed, '--quiet'], env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const statuses = async (har: string) => (JSON.parse(await readFile(har, 'utf8')) as { log: { entries: Array<{ request: { method: string; url: string }; response: { status: number } }> } }).log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname.replace(/[0-9a-f]{24}$/, '{id}')} ${e.response.status}`);
    const before = await statuses(`${tmp.path('run1')}/primary.har`);
    assert.equal(before.length, 9);
    assert.deepEqual(await statuses(replayed), before);
    // And bb diff of the two agrees: the same build answered (the Host each request named is bb's choice on both sides).
    const diff = await runBb(['diff', `${tmp.path('run1')}/primary.har`, replayed], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });

  it('--merge adds the reports of several shadows', async () => {
    const a = tmp.path('run1.json');
    const merged = tmp.path('merged.json');
    const run = await runBb(['shadow', '--merge', a, a, '--json', merged], env);
    assert.equal(run.code, 1, run.stderr);
    const one = JSON.parse(await readFile(a, 'utf8')) as ShadowReport;
    const two = JSON.parse(await readFile(merged, 'utf8')) as ShadowReport;
    assert.equal(two.totals.requests, one.totals.requests * 2);
    assert.equal(two.merged, 2);
    assert.equal(two.findings[0]!.count, one.findings[0]!.count * 2);
  });
});

describe('bb shadow: requests bb refuses itself', () => {
  it('a malformed request first (bb answers 400) and an oversized head (431): neither counts live, and bb diff of the captures leaves them out too', async () => {
    const [primary, candidate, secondary] = [await service('old'), await service('old'), await service('old')];
    const out = tmp.path('refused');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--secondary', secondary.url, '--out', out, '--until', '3'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const { port } = new URL(url!);
    // A header line with no colon: bb answers 400 before the tee sees an exchange.
    const raw = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(port), '127.0.0.1', () => s.end('GET /items HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'));
      let got = '';
      s.on('data', (d) => (got += d));
      s.on('end', () => resolve(got));
      s.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 400 /);
    const c = new Client(url!);
    try {
      const big = await c.request({ method: 'GET', path: '/items', headers: { 'x-long': 'y'.repeat(30_000) } });
      assert.equal(big.statusCode, 431);
      await big.body.text();
      const post = await c.request({ method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
      await post.body.text();
      for (let i = 0; i < 2; i++) assert.equal((await get(c, '/items')).status, 200);
    } finally {
      await c.close();
    }
    assert.equal(await bb.exited, 0, bb.stdout() + bb.stderr());
    assert.match(bb.stdout(), /OK: 3 requests, 2 mirrored/);
    // The refused request is the primary capture's first entry, with no shadow tag: before, bb diff then took the
    // captures for plain ones and reported every exchange the shadow did not mirror as missing.
    const first = (JSON.parse(await readFile(`${out}/primary.har`, 'utf8')) as { log: { entries: Array<{ _bb: { shadow?: unknown; error?: unknown } }> } }).log.entries[0]!;
    assert.equal(first._bb.shadow, undefined);
    assert.ok(first._bb.error);
    for (const noise of [[], ['--noise', `${out}/secondary.har`]]) {
      const diff = await runBb(['diff', `${out}/primary.har`, `${out}/candidate.har`, ...noise], env);
      assert.equal(diff.code, 0, diff.stdout + diff.stderr);
      assert.match(diff.stdout, /^MATCH +\(2 pairs;/);
    }
  });
});

describe('bb shadow: an event stream', () => {
  it("the mirrors' copies end with the primary's stream; a changed event field is one regression", async () => {
    // A mirror timeout longer than the 60 s this run may take: a copy that waited for it would get bb killed.
    const { bb, json, url } = await shadowOld3('sse', ['--until', '1', '--timeout', '120000']);
    const res = await fetch(`${url}/events`);
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/\n\n/g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    // Let the targets' three events arrive too, then leave, as a browser tab closes.
    await new Promise((r) => setTimeout(r, 150));
    await reader.cancel();
    const code = await bb.exited;
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(code, 1, bb.stdout() + bb.stderr());
    assert.equal(report.totals.errors, 0, JSON.stringify(report.totals));
    assert.equal(report.totals.regressions, 1, JSON.stringify(report));
    assert.deepEqual(report.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['regression changed response.events[].data.level'], JSON.stringify(report.findings));
    // Each copy ended with the client's stream (bb ended it, as the client did the primary's), its three events in.
    for (const side of ['primary', 'candidate', 'secondary']) {
      const har = JSON.parse(await readFile(`${tmp.path('sse')}/${side}.har`, 'utf8')) as { log: { entries: Array<{ _bb: { aborted?: string }; _eventSourceMessages?: unknown[] }> } };
      assert.equal(har.log.entries[0]!._bb.aborted, 'client', side);
      assert.equal(har.log.entries[0]!._eventSourceMessages?.length, 3, side);
    }
  });
});

/**
 * A run of six GETs of one build on every target, `dies` stopped for good after the third (its three mirrors
 * answered first); the primary answers all six. The run's exit code, its report and bb's output, and its --out.
 */
async function diesMidRun(slug: string, dies: 'candidate' | 'secondary'): Promise<{ code: number | null; report: ShadowReport; stdout: string; stderr: string; out: string }> {
  const targets = { primary: await service('old'), candidate: await service('old'), ...(dies === 'secondary' ? { secondary: await service('old') } : {}) };
  const out = tmp.path(slug);
  const json = tmp.path(`${slug}.json`);
  const secondary = targets.secondary ? ['--secondary', targets.secondary.url] : [];
  const bb = startBb(['shadow', '--primary', targets.primary.url, '--candidate', targets.candidate.url, ...secondary, '--out', out, '--json', json, '--until', '6', '--timeout', '2000'], env, { timeoutMs: 60_000 });
  const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
  const c = new Client(url!);
  try {
    for (let i = 0; i < 3; i++) assert.equal((await get(c, '/items')).status, 200);
    // Give the three mirrors time to be answered, then stop the target for good.
    await new Promise((r) => setTimeout(r, 300));
    await targets[dies]!.close();
    for (let i = 0; i < 3; i++) assert.equal((await get(c, '/items')).status, 200, `the primary answers with the ${dies} gone`);
  } finally {
    await c.close();
  }
  const code = await bb.exited;
  return { code, report: JSON.parse(await readFile(json, 'utf8')) as ShadowReport, stdout: bb.stdout(), stderr: bb.stderr(), out };
}

describe('bb shadow: the candidate dies mid-run', () => {
  it('the primary keeps serving, the candidate errors count per route, the run says so and fails the gate', async () => {
    const { code, report, stdout, stderr, out } = await diesMidRun('dies', 'candidate');
    assert.equal(report.totals.requests, 6);
    assert.equal(report.totals.mirrored, 6);
    assert.equal(report.routes['GET /items']?.equal, 3, JSON.stringify(report.routes));
    const cand = JSON.parse(await readFile(`${out}/candidate.har`, 'utf8')) as { log: { entries: Array<{ response: { status: number; content: { text?: string } }; _bb: unknown }> } };
    const seen = cand.log.entries.map((e) => `${e.response.status} ${JSON.stringify(e._bb)} ${e.response.content.text ?? ''}`).join('\n');
    assert.equal(report.routes['GET /items']?.errors, 3, `${JSON.stringify(report.routes)} ${JSON.stringify(report.findings)}\n${seen}`);
    assert.match(stdout, /^REGRESSIONS: .*, 3 the candidate failed \(rate 50\.00%.*3 errors/m);
    assert.equal(report.totals.candidateErrors, 3);
    assert.equal(report.regressionRate, 0.5);
    // The new build failed where the old one answered: the gate fails, whatever was compared equal.
    assert.equal(code, 1, stdout + stderr);
    // bb diff of the captures leaves the three out as the live run did (before, it compared bb's own 502 with the primary's 200).
    for (const env2 of [env, { ...env, BB_DIFF_BOUNDED_BYTES: '1' }]) {
      const diff = await runBb(['diff', `${out}/primary.har`, `${out}/candidate.har`], env2);
      assert.equal(diff.code, 0, diff.stdout + diff.stderr);
      assert.match(diff.stdout, /^MATCH +\(3 pairs;/);
      assert.match(diff.stdout, /3 exchanges left out: a mirror has no answer/);
    }
  });
});

describe('bb shadow: the secondary dies mid-run', () => {
  it('counts its errors but does not fail the gate: the new build answered each exchange as the old one', async () => {
    const { code, report, stdout, stderr } = await diesMidRun('secondary-dies', 'secondary');
    assert.deepEqual([report.totals.errors, report.totals.candidateErrors, report.regressionRate], [3, 0, 0], JSON.stringify(report.totals));
    assert.match(stdout, /^OK: .*3 errors/m);
    assert.equal(code, 0, stdout + stderr);
  });
});

describe('bb shadow: SIGINT', () => {
  it('ends the run as --until does: mirrors finish, the captures and the report are written, the verdict is the exit status', async () => {
    const [primary, candidate] = [await service('old'), await service('old')];
    const out = tmp.path('sigint');
    const json = tmp.path('sigint.json');
    const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', out, '--json', json], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    try {
      for (let i = 0; i < 3; i++) assert.equal((await get(c, '/items')).status, 200);
    } finally {
      await c.close();
    }
    bb.child.kill('SIGINT');
    const code = await bb.exited;
    assert.equal(code, 0, bb.stdout() + bb.stderr());
    assert.match(bb.stderr(), /SIGINT: letting mirrors finish/);
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.requests, 3);
    assert.equal(report.totals.equal, 3);
    for (const side of ['primary', 'candidate']) {
      const har = JSON.parse(await readFile(`${out}/${side}.har`, 'utf8')) as { log: { entries: unknown[] } };
      assert.equal(har.log.entries.length, 3, side);
    }
  });
});

describe('bb shadow --compare end', () => {
  it('compares once the run ends: the verdict, the exit status and the report as a live run has them; a terminal sees the requests answered meanwhile', async () => {
    // On a pseudo-terminal: stdout and stderr both arrive on stdout().
    const { bb, json, url } = await shadowOld3('end', ['--until', '3', '--compare', 'end'], true);
    const c = new Client(url);
    try {
      for (let i = 0; i < 2; i++) assert.equal((await get(c, '/items')).status, 200);
      // The line that stands for the live table, redrawn every half second; the third request ends the run (--until 3).
      await bb.waitFor(/2 requests answered; compared when the run ends/, 10_000);
      assert.equal((await get(c, '/items')).status, 200);
    } finally {
      await c.close();
    }
    const code = await bb.exited;
    const out = bb.stdout();
    assert.equal(code, 1, `exit 1 on regressions\n${out}`);
    assert.match(out, /--compare end: exchanges are compared once the run ends/);
    assert.doesNotMatch(out, /too little CPU/);
    assert.match(out, /REGRESSIONS: 3 requests, 3 mirrored, 3 with regressions/);
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.routes['GET /items']?.regressions, 3, JSON.stringify(report.routes));
    assert.deepEqual(liveKeys(report), ['real changed response.body.total', 'real removed response.headers.x-served-by']);
  });

  it('a value other than live or end, or beside --ui: one line, exit 2', async () => {
    const [primary, candidate] = [await service('old'), await service('new')];
    for (const [extra, message] of [
      [['--compare', 'later'], /--compare takes live or end, got 'later'/],
      [['--compare', 'end', '--ui'], /--compare end shows findings only when the run ends/],
    ] as const) {
      const run = await runBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', tmp.path(`bad-${extra.length}`), '--until', '1', ...extra], env);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, message);
    }
  });
});
