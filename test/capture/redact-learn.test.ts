// What the recorder learns from response bodies (capture/redact-learn.ts),
// and the order redaction by value follows: literal facts into a real
// capture, its journal read while it records and the HAR it writes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { openCapture, type Capture } from '../../capture/index.js';
import { FactBus, type Fact } from '../../proxy/events.js';
import { LEARN_BYTES } from '../../capture/redact-learn.js';
import { DEFAULT_REDACTED_HEADERS, DEFAULT_REDACTED_KEYS, Redactor, SECRET_NAME_ENDINGS } from '../../capture/redact.js';
import type { Har } from '../../capture/har.js';
import { exchange } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();
const TOKEN = 'at_9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c';
const SID = 'Zk3v9QpL2mXw8RtY6nBc4HdJ0aFs7GeU';

/** A capture fed `facts`; its journal as it stands after them, then its HAR. */
async function record(name: string, facts: Fact[]): Promise<{ journal: string; har: Har; text: string }> {
  const out = tmp.path(`${name}.har`);
  const cap: Capture = await openCapture({ out, label: 'l', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: tmp.bbHome });
  const bus = new FactBus();
  bus.on(cap.listener);
  for (const f of facts) bus.emit(f);
  bus.emit({ type: 'flush' });
  const journal = readFileSync(`${out}.journal`, 'utf8');
  await cap.close();
  const text = readFileSync(out, 'utf8');
  return { journal, har: JSON.parse(text) as Har, text };
}

/** A request reusing the token in its query and a header (heads are journaled as they arrive). */
const reuse = (at: number) => exchange({ at, target: `/q?t=${TOKEN}`, reqHeaders: ['Host', 'x', 'X-Auth', `Bearer ${TOKEN}`], status: 200 });

const json = (extra: string[] = []) => ['Content-Type', 'application/json', ...extra];

describe('the recorder learns the secrets a response body issues', () => {
  const cases: Array<[string, Fact[]]> = [
    ['a JSON login answer', exchange({ method: 'POST', target: '/login', status: 200, resHeaders: json(), resBody: [Buffer.from(JSON.stringify({ access_token: TOKEN, token_type: 'bearer' }))] })],
    ['a gzipped one, in two chunks', (() => {
      const gz = gzipSync(JSON.stringify({ data: { session: { accessToken: TOKEN } } }));
      return exchange({ method: 'POST', target: '/login', status: 200, resHeaders: json(['Content-Encoding', 'gzip']), resBody: [gz.subarray(0, 9), gz.subarray(9)] });
    })()],
    ['an OAuth form answer', exchange({ method: 'POST', target: '/token', status: 200, resHeaders: ['Content-Type', 'application/x-www-form-urlencoded'], resBody: [Buffer.from(`access_token=${TOKEN}&token_type=bearer`)] })],
  ];
  for (const [what, login] of cases) {
    it(`from ${what}: a later request's query and header reach the journal redacted`, async () => {
      const { journal, har, text } = await record(what.replace(/\W+/g, '-'), [...login, ...reuse(10)]);
      assert.ok(!journal.includes(TOKEN), journal);
      assert.ok(!text.includes(TOKEN));
      const q = har.log.entries.find((e) => e.request.url.includes('/q'))!;
      const p = /t=(<redacted:[0-9a-f]{8}>)/.exec(q.request.url)?.[1];
      assert.ok(p, q.request.url);
      assert.equal(q.request.headers.find((h) => h.name === 'X-Auth')?.value, `Bearer ${p}`);
      assert.match(journal, new RegExp(`\\{"r":"sec","p":"${p}","n":${TOKEN.length}\\}`));
    });
  }

  it(`reads no body past LEARN_BYTES on the relay: the head keeps the token in the journal, the HAR hides it (its writer reads every body)`, async () => {
    const big = JSON.stringify({ access_token: TOKEN, pad: 'p'.repeat(LEARN_BYTES) });
    const { journal, har, text } = await record('past-learn-bytes', [
      ...exchange({ method: 'POST', target: '/login', status: 200, resHeaders: json(), resBody: [Buffer.from(big)] }),
      ...reuse(10),
      ...exchange({ at: 20, method: 'POST', target: '/j', reqHeaders: ['Host', 'x', 'Content-Type', 'application/json'], reqBody: [Buffer.from(JSON.stringify({ auth: TOKEN }))], status: 200 }),
      ...exchange({ at: 30, target: `/p/${TOKEN}/x`, status: 200 }),
    ]);
    assert.ok(journal.includes(`Bearer ${TOKEN}`), 'documented: journaled as sent');
    assert.ok(!text.includes(TOKEN), 'the HAR holds it nowhere');
    assert.match(har.log.entries.find((e) => e.request.url.endsWith('/j'))!.request.postData!.text!, /^\{"auth":"<redacted:[0-9a-f]{8}>"\}$/);
    assert.match(har.log.entries.find((e) => e.request.url.endsWith('/x'))!.request.url, /\/p\/<redacted:[0-9a-f]{8}>\/x$/);
  });

  it('reads a body that names no secret no further, and learns no value under a name that is none', async () => {
    const { journal } = await record('no-secret-name', [
      ...exchange({ method: 'POST', target: '/login', status: 200, resHeaders: json(), resBody: [Buffer.from(JSON.stringify({ id: TOKEN, user: 'ann' }))] }),
      ...reuse(10),
    ]);
    assert.ok(!journal.includes('"r":"sec"'));
    assert.ok(journal.includes(`t=${TOKEN}`), 'an id is no secret: kept as sent');
  });
});

describe('mentionsSecretName', () => {
  it('finds every secret name in every spelling, and --redact names; a body of other names is read no further', () => {
    const r = new Redactor(Buffer.alloc(32), { json: ['session_key'], query: ['sig'] });
    const names = [...DEFAULT_REDACTED_KEYS, ...DEFAULT_REDACTED_HEADERS, ...SECRET_NAME_ENDINGS.map((e) => `x_${e}`), 'newPassword', 'sessionKey', 'SESSION-KEY', 'sig'];
    const spellings = (n: string) => [n, n.toUpperCase(), n.replace(/[-_](.)/g, (_all, c: string) => c.toUpperCase()), n.replace(/_/g, '-')];
    for (const name of names) for (const s of spellings(name)) assert.ok(r.mentionsSecretName(`{"${s}":"v"}`), s);
    assert.equal(r.mentionsSecretName(JSON.stringify({ id: 1, user: 'ann', items: [{ qty: 2, href: '/items/2?page=1' }] })), false);
  });
});

describe('order', () => {
  it('an exchange that ends after a value was learned hides it in its body, sent before; a head journaled before keeps it', async () => {
    // #1 sends the value in a header and ends; #2 streams a body holding it; #3 sets it as a cookie; then #2 ends.
    const early = exchange({ id: 901, target: '/early', reqHeaders: ['Host', 'x', 'X-Session', SID], status: 200 });
    const started = exchange({ id: 902, method: 'POST', target: '/upload', reqHeaders: ['Host', 'x', 'Content-Type', 'text/plain'], reqBody: [Buffer.from(`sid ${SID}`)], status: 200 });
    const splitAt = started.findIndex((f) => f.type === 'response-started');
    const login = exchange({ id: 903, target: '/login', status: 200, resHeaders: ['Set-Cookie', `sid=${SID}; Path=/`] });
    const { journal, har } = await record('order', [...early, ...started.slice(0, splitAt), ...login, ...started.slice(splitAt)]);
    const p = /sid=(<redacted:[0-9a-f]{8}>)/.exec(har.log.entries.find((e) => e.request.url.endsWith('/login'))!.response.headers[0]!.value)![1];
    assert.equal(har.log.entries.find((e) => e.request.url.endsWith('/upload'))!.request.postData!.text, `sid ${p}`);
    // Documented: a value reused before bb saw it as a secret's is journaled, and written, as sent.
    assert.equal(har.log.entries.find((e) => e.request.url.endsWith('/early'))!.request.headers[1]!.value, SID);
    assert.ok(journal.includes(`"X-Session","${SID}"`));
  });
});
