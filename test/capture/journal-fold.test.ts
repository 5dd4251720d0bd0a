// Folded journal records (formats 3 and 4, capture/journal-fold.ts): a line stands
// for exactly the records it replaces; `bb recover` reads the old journals
// (five records an exchange) and the new ones to the same HAR; the recorder
// folds only an exchange's own records of one turn, each exchange into its
// own line when exchanges interleave (an h2 connection's streams).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FactBus, type Fact } from '../../proxy/events.js';
import { openCapture, recoverCapture } from '../../capture/index.js';
import type { JournalRecord } from '../../capture/journal.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import type { Har } from '../../capture/har.js';
import { assertValidHar } from '../helpers/har-schema.js';
import { exchange } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const header = (v: number) =>
  `{"r":"bb-journal","v":${v},"label":"old","target":"http://127.0.0.1:3001","listen":"http://127.0.0.1:8080","startedDateTime":"2026-12-05T01:00:00.000Z","bodyCap":1048576,"redact":false,"creator":{"name":"bb","version":"0.1.0"}}`;
// `.bodies` of both journals: a GET's response, a POST's request and response, an open request's first bytes.
const bodies = 'hello world{"a":1}createdpartial';

// A version-2 journal as bb wrote it before folding (one record a line): a literal, so old journals stay readable.
const v2 = [
  header(2),
  '{"r":"start","x":1,"seq":1,"c":"c1","ts":1764896400000.25,"scheme":"http","method":"GET","target":"/a?q=1","v":"1.1","h":["Host","127.0.0.1:8080"],"up":"http://127.0.0.1:3001","upg":false}',
  '{"r":"qe","x":1,"ts":1764896400000.5,"tr":[]}',
  '{"r":"start","x":2,"seq":2,"c":"c2","ts":1764896400001,"scheme":"http","method":"POST","target":"/b","v":"1.1","h":["Host","127.0.0.1:8080","Content-Type","application/json","Transfer-Encoding","chunked"],"up":"http://127.0.0.1:3001","upg":false}',
  '{"r":"qb","x":2,"ts":1764896400001.5,"o":11,"n":7,"w":7}',
  '{"r":"qe","x":2,"ts":1764896400002,"tr":["X-Sum","7"]}',
  '{"r":"rs","x":1,"ts":1764896400003,"st":200,"sm":"OK","v":"1.1","h":["Content-Type","text/plain","Content-Length","11"]}',
  '{"r":"rb","x":1,"ts":1764896400003.25,"o":0,"n":11,"w":11}',
  '{"r":"done","x":1,"ts":1764896400003.5,"seq":3,"tr":[]}',
  '{"r":"rs","x":2,"ts":1764896400004,"st":201,"sm":"Created","v":"1.1","h":["Content-Type","text/plain","Transfer-Encoding","chunked"]}',
  '{"r":"rb","x":2,"ts":1764896400004.5,"o":18,"n":3,"w":3}',
  '{"r":"rb","x":2,"ts":1764896400005,"o":21,"n":4,"w":4}',
  '{"r":"done","x":2,"ts":1764896400005.5,"seq":4,"tr":["X-Checksum","abc"]}',
  '{"r":"start","x":3,"seq":5,"c":"c1","ts":1764896400006,"scheme":"http","method":"PUT","target":"/c","v":"1.1","h":["Host","127.0.0.1:8080"],"up":"http://127.0.0.1:3001","upg":false}',
  '{"r":"qb","x":3,"ts":1764896400006.5,"o":25,"n":7,"w":7}',
];

// The same traffic in format 3: each run of an exchange's records in one turn folded into one line.
const v3 = [
  header(3),
  '{"r":"start","x":1,"seq":1,"c":"c1","ts":1764896400000.25,"scheme":"http","method":"GET","target":"/a?q=1","v":"1.1","h":["Host","127.0.0.1:8080"],"up":"http://127.0.0.1:3001","upg":false,"qe":1764896400000.5,"tr":[]}',
  '{"r":"start","x":2,"seq":2,"c":"c2","ts":1764896400001,"scheme":"http","method":"POST","target":"/b","v":"1.1","h":["Host","127.0.0.1:8080","Content-Type","application/json","Transfer-Encoding","chunked"],"up":"http://127.0.0.1:3001","upg":false,"qb":[{"ts":1764896400001.5,"o":11,"n":7,"w":7}],"qe":1764896400002,"tr":["X-Sum","7"]}',
  '{"r":"rs","x":1,"ts":1764896400003,"st":200,"sm":"OK","v":"1.1","h":["Content-Type","text/plain","Content-Length","11"],"rb":[{"ts":1764896400003.25,"o":0,"n":11,"w":11}],"done":1764896400003.5,"seq":3,"tr":[]}',
  '{"r":"rs","x":2,"ts":1764896400004,"st":201,"sm":"Created","v":"1.1","h":["Content-Type","text/plain","Transfer-Encoding","chunked"],"rb":[{"ts":1764896400004.5,"o":18,"n":3,"w":3},{"ts":1764896400005,"o":21,"n":4,"w":4}],"done":1764896400005.5,"seq":4,"tr":["X-Checksum","abc"]}',
  '{"r":"start","x":3,"seq":5,"c":"c1","ts":1764896400006,"scheme":"http","method":"PUT","target":"/c","v":"1.1","h":["Host","127.0.0.1:8080"],"up":"http://127.0.0.1:3001","upg":false,"qb":[{"ts":1764896400006.5,"o":25,"n":7,"w":7}]}',
];

async function recovered(name: string, lines: string[]): Promise<Har> {
  const out = join(tmp.dir, `${name}.har`);
  writeFileSync(`${out}.journal`, lines.join('\n') + '\n');
  writeFileSync(`${out}.bodies`, bodies);
  const result = await recoverCapture(out, { bbHome: tmp.bbHome });
  assert.deepEqual(result, { out, entries: 3, dropped: 0, open: 1 });
  const har = JSON.parse(await readFile(out, 'utf8')) as Har;
  assertValidHar(har);
  return har;
}

/** Three exchanges as an h2 connection's streams, their completions batched as the h2 tap emits them (made durable by the flush before the chunk that ends them is forwarded). */
function streams(): [Fact[], Fact[], Fact[]] {
  const batched = (facts: Fact[]) => facts.map((f) => (f.type === 'exchange-completed' ? { ...f, batched: true } : f));
  return [
    batched(exchange({ id: 1, target: '/s1', status: 200, resBody: [Buffer.from('A')] })),
    batched(exchange({ id: 2, target: '/s2', status: 200, resBody: [Buffer.from('B1'), Buffer.from('B2')] })),
    batched(exchange({ id: 3, target: '/s3', status: 200, resBody: [Buffer.from('C')] })),
  ];
}

describe('folded journal records', () => {
  it('unfold to exactly the records a version-2 journal holds, in its order', () => {
    const folded = v3.slice(1).map((l) => JSON.parse(l) as JournalRecord).flatMap(unfoldRecord);
    assert.deepEqual(folded.map((r) => JSON.stringify(r)), v2.slice(1));
    const plain = JSON.parse(v2[1]!) as JournalRecord;
    assert.deepEqual(unfoldRecord(plain), [plain]);
  });

  it('bb recover reads a version-2 journal and its version-3 twin to the same HAR', async () => {
    const old = await recovered('v2', v2);
    const now = await recovered('v3', v3);
    assert.deepEqual(now, old);
    const [get, post, open] = old.log.entries;
    assert.equal(get!.response.content.text, 'hello world');
    assert.equal(post!.request.postData?.text, '{"a":1}');
    assert.equal(post!.response.content.text, 'created');
    assert.deepEqual(post!.request._trailers, [{ name: 'X-Sum', value: '7' }]);
    assert.deepEqual(post!.response._trailers, [{ name: 'X-Checksum', value: 'abc' }]);
    assert.equal(open!._bb?.inFlight, true);
  });

  it('a start with its `bb shadow` tag folded (format 4) unfolds to the start, the tag, then its chunks and end', () => {
    const line = '{"r":"start","x":7,"seq":3,"c":"c1","ts":10,"scheme":"http","method":"POST","target":"/t","v":"1.1","h":[],"up":"http://127.0.0.1:3001","upg":false,"tag":{"ts":10.5,"shadow":{"id":3,"skipped":"unsafe"}},"qb":[{"ts":11,"o":0,"n":2,"w":2}],"qe":12,"tr":[]}';
    assert.deepEqual(unfoldRecord(JSON.parse(line) as JournalRecord).map((r) => JSON.stringify(r)), [
      '{"r":"start","x":7,"seq":3,"c":"c1","ts":10,"scheme":"http","method":"POST","target":"/t","v":"1.1","h":[],"up":"http://127.0.0.1:3001","upg":false}',
      '{"r":"tag","x":7,"ts":10.5,"shadow":{"id":3,"skipped":"unsafe"}}',
      '{"r":"qb","x":7,"ts":11,"o":0,"n":2,"w":2}',
      '{"r":"qe","x":7,"ts":12,"tr":[]}',
    ]);
  });

  it('bb recover reads a version-3 journal\'s tag records and their version-4 folded twins to the same HAR', async () => {
    const tagged = (lines: string[], fold: boolean) => lines.map((l, i) => {
      if (i === 0) return l.replace('"v":3', `"v":${fold ? 4 : 3}`);
      const r = JSON.parse(l) as JournalRecord;
      if (r.r !== 'start') return l;
      const shadow = r.x === 2 ? { id: r.seq, skipped: 'unsafe' } : { id: r.seq };
      if (!fold) return `${l}\n${JSON.stringify({ r: 'tag', x: r.x, ts: r.ts, shadow })}`;
      // The tag's member goes right after the start's own (as the recorder writes it), before any folded chunk.
      const { qb, qe, tr, ...start } = r as JournalRecord & { qb?: unknown; qe?: unknown; tr?: unknown };
      return JSON.stringify({ ...start, tag: { ts: r.ts, shadow }, ...(qb ? { qb } : {}), ...(qe !== undefined ? { qe, tr } : {}) });
    });
    const separate = await recovered('v3-tags', tagged(v3, false));
    const folded = await recovered('v4-tags', tagged(v3, true));
    assert.deepEqual(folded, separate);
    assert.deepEqual(folded.log.entries.map((e) => e._bb?.shadow), [{ id: 1 }, { id: 2, skipped: 'unsafe' }, { id: 5 }]);
  });

  it('folds a tag given while the start is held into its line; a later one goes as its own record; both reach the HAR merged', async () => {
    const out = join(tmp.dir, 'tags.har');
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, redact: false });
    const bus = new FactBus();
    bus.on(capture.listener);
    const a = exchange({ id: 1, method: 'POST', reqBody: [Buffer.from('one')], status: 200, resBody: [Buffer.from('A')] });
    const b = exchange({ id: 2, status: 204 });
    // As the tee tags: at the exchange's start, while the recorder holds it; twice for b (its shared id, then why it was skipped).
    bus.emit(a[0]!);
    assert.equal(capture.tag(1, { id: 1 }), true);
    bus.emit(b[0]!);
    assert.equal(capture.tag(2, { id: 2 }), true);
    assert.equal(capture.tag(2, { id: 2, skipped: 'sampled out' }), true);
    bus.emit(a[1]!);
    await new Promise((r) => setImmediate(r));
    const lines = () => readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).slice(1).map((l) => JSON.parse(l) as JournalRecord & { tag?: unknown });
    assert.deepEqual(lines().map((r) => [r.r, r.x, (r.tag as { shadow?: unknown } | undefined)?.shadow]), [
      ['start', 1, { id: 1 }],
      ['start', 2, { id: 2, skipped: 'sampled out' }],
    ]);
    // The starts are written: a tag now is a record of its own.
    assert.equal(capture.tag(1, { id: 1, skipped: 'queue full' }), true);
    for (const f of [...a.slice(2), ...b.slice(1)]) bus.emit(f);
    assert.deepEqual(lines().slice(2).map((r) => r.r), ['tag', 'qe', 'rs', 'qe', 'rs']);
    assert.equal(capture.tag(1, { id: 9 }), false, 'an exchange that ended takes no tag');
    await capture.close();
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    assert.deepEqual(har.log.entries.map((e) => e._bb?.shadow), [{ id: 1, skipped: 'queue full' }, { id: 2, skipped: 'sampled out' }]);
  });

  it('folds an exchange\'s records of one turn only: not across turns', async () => {
    const out = join(tmp.dir, 'turns.har');
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, redact: false });
    const bus = new FactBus();
    bus.on(capture.listener);
    const a = exchange({ id: 1, method: 'POST', reqBody: [Buffer.from('one')], status: 200, resBody: [Buffer.from('A')] });
    const b = exchange({ id: 2, status: 204 });
    // First turn: a's start and first chunk, then b's start: a's line is written with its chunk, b's is held.
    for (const f of [a[0]!, a[1]!, b[0]!]) bus.emit(f);
    await new Promise((r) => setImmediate(r));
    // The held line reaches the file with the turn's flush.
    const firstTurn = readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).slice(1);
    assert.deepEqual(firstTurn, [
      '{"r":"start","x":1,"seq":1,"c":"c1","ts":1735787045000,"scheme":"http","method":"POST","target":"/","v":"1.1","h":["Host","127.0.0.1:8080"],"up":"http://127.0.0.1:3001","upg":false,"qb":[{"ts":1735787045001,"o":0,"n":3,"w":3}]}',
      '{"r":"start","x":2,"seq":2,"c":"c1","ts":1735787045000,"scheme":"http","method":"GET","target":"/","v":"1.1","h":["Host","127.0.0.1:8080"],"up":"http://127.0.0.1:3001","upg":false}',
    ]);
    // Next turn: the ends of both requests (their starts went out with the last turn: not folded), then each response whole.
    for (const f of [a[2]!, b[1]!, ...a.slice(3), ...b.slice(2)]) bus.emit(f);
    const lines = readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).slice(1);
    assert.deepEqual(lines.slice(2).map((l) => (JSON.parse(l) as JournalRecord).r), ['qe', 'qe', 'rs', 'rs']);
    assert.deepEqual(lines.flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord)).map((r) => `${r.r}${r.x}`),
      ['start1', 'qb1', 'start2', 'qe1', 'qe2', 'rs1', 'rb1', 'done1', 'rs2', 'done2']);
    await capture.close();
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    assert.deepEqual(har.log.entries.map((e) => [e.request.method, e.response.status, e.response.content.text ?? '']), [['POST', 200, 'A'], ['GET', 204, '']]);
  });

  it('folds each exchange\'s records of a turn into its own line when exchanges interleave, as an h2 upstream answers streams', async () => {
    const out = join(tmp.dir, 'streams.har');
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, redact: false });
    // Followed live, keeping no finished exchange: its entry is read back through the lines the tap was told.
    const live = capture.live({ keep: 0 });
    const bus = new FactBus();
    bus.on(capture.listener);
    const [a, b, c] = streams();
    const lines = () => readFileSync(`${out}.journal`, 'utf8').split('\n').filter(Boolean).slice(1);
    // One chunk from the client: three requests, each HEADERS with END_STREAM.
    for (const f of [a[0]!, a[1]!, b[0]!, b[1]!, c[0]!, c[1]!]) bus.emit(f);
    bus.emit({ type: 'flush' });
    // One chunk from the upstream: the three HEADERS frames first, then DATA frames; b's last DATA comes in the next chunk.
    for (const f of [a[2]!, b[2]!, c[2]!, a[3]!, b[3]!, c[3]!, a[4]!, c[4]!]) bus.emit(f);
    bus.emit({ type: 'flush' });
    // Each completed response is one line, written at its done (completion order); b's, unfinished, at the flush.
    assert.deepEqual(lines().map((l) => { const r = JSON.parse(l) as JournalRecord & { done?: number }; return `${r.r}${r.x}${r.r === 'rs' && r.done === undefined ? '…' : ''}`; }),
      ['start1', 'start2', 'start3', 'rs1', 'rs3', 'rs2…']);
    for (const f of [b[4]!, b[5]!]) bus.emit(f);
    bus.emit({ type: 'flush' });
    const all = lines();
    assert.equal(all.length, 8);
    // An exchange's own records keep their order.
    const unfolded = all.flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord)).map((r) => `${r.r}${r.x}`);
    for (const x of [1, 2, 3]) {
      assert.deepEqual(unfolded.filter((r) => r.endsWith(String(x))).map((r) => r.slice(0, -1)), x === 2 ? ['start', 'qe', 'rs', 'rb', 'rb', 'done'] : ['start', 'qe', 'rs', 'rb', 'done']);
    }
    assert.deepEqual(live.rows().map((r) => r.seq), [1, 2, 3]);
    assert.deepEqual([1, 2, 3].map((seq) => live.entry(seq)?.response.content.text), ['A', 'B1B2', 'C']);
    await capture.close();
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    assertValidHar(har);
    assert.deepEqual(har.log.entries.map((e) => e.response.content.text), ['A', 'C', 'B1B2']);
  });

  it('bb recover of that journal cut at any byte yields every exchange whose done was whole before the cut, and nothing unfinished as complete', async () => {
    const out = join(tmp.dir, 'streams-cut.har');
    const capture = await openCapture({ out, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', bbHome: tmp.bbHome, redact: false });
    const bus = new FactBus();
    bus.on(capture.listener);
    const [a, b, c] = streams();
    for (const f of [a[0]!, a[1]!, b[0]!, b[1]!, c[0]!, c[1]!]) bus.emit(f);
    bus.emit({ type: 'flush' });
    for (const f of [a[2]!, b[2]!, c[2]!, a[3]!, b[3]!, c[3]!, a[4]!, c[4]!]) bus.emit(f);
    bus.emit({ type: 'flush' });
    for (const f of [b[4]!, b[5]!]) bus.emit(f);
    bus.emit({ type: 'flush' });
    // As a crash leaves them: copied before the close.
    const journal = readFileSync(`${out}.journal`);
    const bodies = readFileSync(`${out}.bodies`);
    await capture.close();
    const lines = journal.toString('utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 9, 'header, three starts, rs1 and rs3 with their done, rs2 unfinished, its chunk, its done');
    const text = new Map([[1, 'A'], [2, 'B1B2'], [3, 'C']]);
    const xOf = (e: Har['log']['entries'][number]) => Number(new URL(e.request.url).pathname.slice(2));
    let lineEnd = lines[0]!.length + 1;
    let whole = 1;
    for (let cut = lineEnd; cut <= journal.length; cut++) {
      while (whole < lines.length && lineEnd + lines[whole]!.length + 1 <= cut) lineEnd += lines[whole++]!.length + 1;
      // The lines whole before the cut (their newline too): their dones are the exchanges a client may have seen complete.
      const done = lines.slice(1, whole).flatMap((l) => unfoldRecord(JSON.parse(l) as JournalRecord)).filter((r) => r.r === 'done').map((r) => r.x).sort();
      const dir = join(tmp.dir, `cut-${cut}`);
      mkdirSync(dir);
      const cout = join(dir, 'streams.har');
      writeFileSync(`${cout}.journal`, journal.subarray(0, cut));
      writeFileSync(`${cout}.bodies`, bodies);
      await recoverCapture(cout, { bbHome: tmp.bbHome });
      const har = JSON.parse(await readFile(cout, 'utf8')) as Har;
      const complete = har.log.entries.filter((e) => !e._bb?.inFlight);
      // A line whole but for its newline may be read too; nothing else.
      const withTorn = whole < lines.length && cut === lineEnd + lines[whole]!.length
        ? [...done, ...unfoldRecord(JSON.parse(lines[whole]!) as JournalRecord).filter((r) => r.r === 'done').map((r) => r.x)].sort()
        : done;
      const got = complete.map((e) => xOf(e)).sort();
      assert.ok([done, withTorn].some((want) => JSON.stringify(want) === JSON.stringify(got)), `cut at byte ${cut} of ${journal.length}: complete ${got}, the whole lines' dones ${done}`);
      for (const e of complete) assert.equal(e.response.content.text, text.get(xOf(e)), `cut at byte ${cut}: bodies intact`);
    }
  });
});
