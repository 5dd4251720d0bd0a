// bb shadow --rotate end to end: real primary, candidate and secondary
// servers on loopback, the real bb binary, a real client. The run is cut in
// segments by time; a request whose candidate answers late is mirrored
// across a boundary. Every segment must be a finished HAR, segment k of the
// three targets must hold the same shared ids, the segments together hold
// every exchange once, and `bb diff` of each segment triple must find what
// the live comparison found for those exchanges. A run killed mid-segment
// leaves journals `bb recover` finishes. Bad --rotate values: one line, exit 2.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { Client } from 'undici';
import { runBb, startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import type { ShadowReport } from '../../../scenario/index.js';
import { assertValidHar } from '../../helpers/har-schema.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const servers: Server[] = [];
after(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
});

/** A build: /items answers its `total` (the new build changed it); /slow answers after `slowMs`. */
async function build(total: number, slowMs: number): Promise<string> {
  const server = createServer((req, res) => {
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, total }));
    };
    if (req.url?.startsWith('/slow')) setTimeout(answer, slowMs);
    else answer();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address() as { port: number };
  return `http://127.0.0.1:${a.port}`;
}

interface Entry {
  startedDateTime: string;
  time: number;
  request: { url: string };
  _bb: { seq: number; shadow?: { id: number; skipped?: string } };
}
type Har = { log: { entries: Entry[]; _bb: { complete: boolean } } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wait = async (c: Client, path: string) => (await c.request({ method: 'GET', path })).body.text();

describe('bb shadow --rotate', () => {
  it('writes finished segments whose ids match across targets, a late mirror in its primary\'s segment, bb diff per segment = live', async () => {
    const [primary, candidate, secondary] = [await build(1, 0), await build(2, 1500), await build(1, 0)];
    const out = tmp.path('rot');
    const json = tmp.path('rot.json');
    const bb = startBb(['shadow', '--primary', primary, '--candidate', candidate, '--secondary', secondary, '--out', out, '--json', json, '--until', '13', '--rotate', '400ms'], env, { timeoutMs: 90_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    // Its own connection (its own mirror lane): the slow answer holds up no other request.
    const slow = new Client(url!);
    let slowDone: Promise<string> | undefined;
    try {
      for (let i = 0; i < 12; i++) {
        await wait(c, `/items?n=${i}`);
        if (i === 1) slowDone = wait(slow, '/slow');
        await sleep(150);
      }
      await slowDone;
    } finally {
      await c.close();
      await slow.close();
    }
    const code = await bb.exited;
    assert.equal(code, 1, `exit 1 on regressions\n${bb.stdout()}\n${bb.stderr()}`);
    const report = JSON.parse(await readFile(json, 'utf8')) as ShadowReport;
    assert.equal(report.totals.requests, 13);
    assert.equal(report.totals.mirrored, 13);

    const names = (await readdir(out)).sort();
    assert.ok(!names.some((n) => n.endsWith('.journal') || n.endsWith('.bodies') || n === 'primary.har'), names.join(' '));
    const count = names.filter((n) => /^primary-\d{4}\.har$/.test(n)).length;
    assert.ok(count >= 3, `3+ segments: ${names.join(' ')}`);
    const seg = (side: string, k: number) => `${out}/${side}-${String(k).padStart(4, '0')}.har`;
    const read = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Har;
    const ids = (h: Har) => h.log.entries.map((e) => e._bb.shadow!.id).sort((a, b) => a - b);

    const all: number[] = [];
    let lastMax = 0;
    let slowSegment = 0;
    for (let k = 1; k <= count; k++) {
      const [p, cand, sec] = [await read(seg('primary', k)), await read(seg('candidate', k)), await read(seg('secondary', k))];
      for (const h of [p, cand, sec]) {
        assertValidHar(h as never);
        assert.equal(h.log._bb.complete, true, `segment ${k} finished`);
      }
      // Segment k holds the same exchanges in all three, and its ids come after segment k-1's.
      assert.deepEqual(ids(cand), ids(p), `candidate segment ${k}`);
      assert.deepEqual(ids(sec), ids(p), `secondary segment ${k}`);
      if (ids(p).length) assert.ok(ids(p)[0]! > lastMax, `segment ${k} ids after segment ${k - 1}'s`);
      lastMax = Math.max(lastMax, ...ids(p));
      all.push(...ids(p));
      const slowEntry = cand.log.entries.find((e) => e.request.url.includes('/slow'));
      if (slowEntry) slowSegment = k;
    }
    // Every exchange once.
    assert.equal(all.length, 13);
    assert.equal(new Set(all).size, 13);
    // The late answer crossed a boundary: segment slowSegment+1 began before the candidate's answer came, and it still sits in its primary's segment.
    assert.ok(slowSegment > 0 && slowSegment < count, `slow in segment ${slowSegment} of ${count}`);
    const cand = (await read(seg('candidate', slowSegment))).log.entries.find((e) => e.request.url.includes('/slow'))!;
    const next = (await read(seg('primary', slowSegment + 1))).log.entries;
    const answeredAt = Date.parse(cand.startedDateTime) + cand.time;
    assert.ok(next.some((e) => Date.parse(e.startedDateTime) < answeredAt), 'the candidate answered after the next segment had begun');
    // Each finished segment was said as it came.
    for (let k = 1; k <= count; k++) assert.match(bb.stderr(), new RegExp(`segment ${k}: \\S*primary-${String(k).padStart(4, '0')}\\.har`));

    // bb diff of each segment triple: together, the live findings, exchange for exchange.
    const offline = new Map<string, number>();
    let pairs = 0;
    for (let k = 1; k <= count; k++) {
      const diff = await runBb(['diff', seg('primary', k), seg('candidate', k), '--noise', seg('secondary', k), '--json', '-'], env);
      assert.ok(diff.code === 0 || diff.code === 1, diff.stderr);
      const result = JSON.parse(diff.stdout) as { findings: Array<{ class: string; kind: string; pattern: string; entries: number }>; pairs: unknown[] };
      pairs += result.pairs.length;
      for (const f of result.findings) if (f.class !== 'known') {
        const key = `${f.class === 'real' ? 'regression' : f.class} ${f.kind} ${f.pattern}`;
        offline.set(key, (offline.get(key) ?? 0) + f.entries);
      }
    }
    const live = new Map(report.findings.map((f) => [`${f.class} ${f.kind} ${f.pattern}`, f.count]));
    assert.deepEqual([...offline].sort(), [...live].sort());
    assert.equal(pairs, report.totals.mirrored);
  });

  it('a run killed mid-segment: bb recover finishes the segment in progress', async () => {
    const [primary, candidate] = [await build(1, 0), await build(1, 0)];
    const out = tmp.path('crash');
    const bb = startBb(['shadow', '--primary', primary, '--candidate', candidate, '--out', out, '--rotate', '300ms'], env, { timeoutMs: 60_000 });
    const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
    const c = new Client(url!);
    try {
      for (let i = 0; i < 10; i++) {
        await wait(c, `/items?n=${i}`);
        await sleep(100);
      }
      // A segment written while it runs (the machine may be slow: up to 20 s).
      for (let t = 0; t < 200 && !/segment 1: /.test(bb.stderr()); t++) await sleep(100);
      // Killed right after an answer: the primary's segment in progress has it.
      await wait(c, '/items?n=last');
      bb.child.kill('SIGKILL');
    } finally {
      await c.close();
    }
    await bb.exited;
    const names = await readdir(out);
    const journals = names.filter((n) => n.endsWith('.har.journal'));
    assert.ok(journals.some((n) => n.startsWith('primary-')), names.join(' '));
    assert.ok(names.includes('primary-0001.har'), `earlier segments finished while it ran: ${names.join(' ')}`);
    let last = 0;
    for (const j of journals) {
      const har = `${out}/${j.slice(0, -'.journal'.length)}`;
      const run = await runBb(['recover', har], env);
      assert.equal(run.code, 0, run.stderr);
      const doc = JSON.parse(await readFile(har, 'utf8')) as Har;
      if (j.startsWith('primary-')) last += doc.log.entries.filter((e) => e.request.url.endsWith('n=last')).length;
    }
    assert.equal(last, 1, 'the last exchange is in the recovered segment in progress');
  });

  for (const bad of ['0', 'banana']) {
    it(`--rotate ${bad}: one line, exit 2`, async () => {
      const run = await runBb(['shadow', '--primary', 'http://127.0.0.1:1', '--candidate', 'http://127.0.0.1:1', '--out', tmp.path(`bad-${bad}`), '--rotate', bad], env);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /--rotate needs a segment size \(64MB, 512KiB\) or a duration \(10m, 30s\)/);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
    });
  }
});
