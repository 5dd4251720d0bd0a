// Redaction gaps of issue 34 (items 4, 5, 6) as tables: every place a secret
// was found in a HAR, and what bb must write there instead. Entries are built
// through a real capture (journal → HAR), and every base64 field is decoded
// before it is searched.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Fact } from '../../proxy/events.js';
import type { Har } from '../../capture/har.js';
import { loadRedactKey, Redactor } from '../../capture/index.js';
import { exchange, recordFacts, TEST_T0 } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';
import { F, PREFACE, T, h2Frame } from '../helpers/h2-frames.js';
import { decodedStrings } from '../helpers/decoded.js';

const tmp = tempDir();
// The bb home's key: placeholders in tables and in captured entries agree.
const r = new Redactor(loadRedactKey(tmp.bbHome));
const P = (v: string) => r.placeholder(v);
let n = 0;

/** Every string in a value, decoded as a reader would (test/helpers/decoded.ts). */
const decodedText = (value: unknown): string => decodedStrings(value).join('\n');

function assertNoSecret(text: string, secrets: string[]): void {
  for (const s of secrets) assert.ok(!text.includes(s), `secret ${s} is in the capture`);
}

async function capture(facts: Fact[], redact = true): Promise<Har> {
  return recordFacts(tmp.dir, tmp.bbHome, facts, { name: `g${++n}`, ...(redact ? {} : { redact: false }) });
}

describe('header values that are secrets', () => {
  for (const name of ['X-Auth-Token', 'X-Amz-Security-Token', 'X-CSRF-Token', 'Authentication-Info']) {
    it(`${name} becomes a placeholder`, () => {
      assert.equal(r.headerValue(name, 'zqtok-123'), P('zqtok-123'));
    });
  }
  it('Refresh keeps its delay and redacts the URL it names', () => {
    assert.equal(r.headerValue('Refresh', '0; url=/next?token=zqabc&x=1'), `0; url=/next?token=${P('zqabc')}&x=1`);
  });
  it('Location redacts the query and the fragment', () => {
    assert.equal(
      r.headerValue('Location', 'https://app/cb?access_token=zqq1&state=s#access_token=zqf1&token_type=bearer'),
      `https://app/cb?access_token=${P('zqq1')}&state=s#access_token=${P('zqf1')}&token_type=bearer`,
    );
  });
  it('a Location without secrets stays byte for byte', () => {
    assert.equal(r.headerValue('Location', '/a?b=1#top'), '/a?b=1#top');
  });
});

describe('query parameters', () => {
  const rows: Array<[string, string]> = [
    ['token[]=zqa&token[]=zqb&x=1', `token[]=${P('zqa')}&token[]=${P('zqb')}&x=1`],
    ['token%5B%5D=zqa', `token%5B%5D=${P('zqa')}`],
    ['password[0]=zqa', `password[0]=${P('zqa')}`],
    ['user[password]=zqa', `user[password]=${P('zqa')}`],
    ['page=2', 'page=2'],
  ];
  for (const [raw, want] of rows) it(`${raw} → ${want}`, () => assert.equal(r.queryString(raw), want));
});

describe('JSON bodies', () => {
  const rows: Array<[string, unknown, string[]]> = [
    ['an array under a secret key', { password: ['zqp1', 'zqp2'], n: 1 }, ['zqp1', 'zqp2']],
    ['an object under a secret key', { client_secret: { v: 'zqc1', w: ['zqc2'] } }, ['zqc1', 'zqc2']],
    ['jwt, private_key and client_secret at any depth', { a: [{ b: { jwt: 'zqj1', private_key: 'zqk1', c: { client_secret: 'zqc3' } } }] }, ['zqj1', 'zqk1', 'zqc3']],
    ['a password 300 levels down', nest(300, { password: 'zqdeep1' }), ['zqdeep1']],
  ];
  for (const [what, value, secrets] of rows) {
    it(what, () => {
      const out = r.jsonText(JSON.stringify(value));
      assert.ok(out !== undefined, 'the body changed');
      assertNoSecret(out!, secrets);
      assert.ok(out!.includes(P(secrets[0]!)), 'the same secret gives the same placeholder');
    });
  }
  it('numbers under a secret key stay', () => {
    assert.equal(r.jsonText(JSON.stringify({ token: [5, 6] })), undefined);
  });
  it('JSON behind an XSSI prefix keeps the prefix and redacts the JSON', () => {
    const out = r.jsonText(`)]}',\n{"access_token":"zqx1"}`);
    assert.equal(out, `)]}',\n{"access_token":"${P('zqx1')}"}`);
  });
  it('a body too deep to re-serialize is replaced and marked (fail closed)', () => {
    const depth = 200_000;
    const text = '['.repeat(depth) + '{"password":"zqdeep2"}' + ']'.repeat(depth);
    const out = r.jsonText(text);
    assert.ok(out !== undefined);
    assertNoSecret(out!, ['zqdeep2']);
    assert.match(out!, /^<redacted: .*too deep/);
  });
  it('a JSON text cut short (past the body cap) still has its secrets redacted', () => {
    const out = r.jsonText('{"a":1,"password":"zqcut1","b":"xxxxxxxx');
    assert.ok(out !== undefined);
    assertNoSecret(out!, ['zqcut1']);
  });
});

function nest(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
}

describe('entries', () => {
  it('a redirect: Location (query and fragment) and redirectURL are redacted like the request URL', async () => {
    const har = await capture(exchange({
      target: '/login', status: 302,
      resHeaders: ['Location', '/cb?access_token=zqloc1#access_token=zqfrag1', 'Content-Location', '/c?token=zqcl1', 'Refresh', '0; url=/r?token=zqref1'],
    }));
    const e = har.log.entries[0]!;
    assertNoSecret(decodedText(har), ['zqloc1', 'zqfrag1', 'zqcl1', 'zqref1']);
    assert.equal(e.response.redirectURL, `/cb?access_token=${P('zqloc1')}#access_token=${P('zqfrag1')}`);
  });

  it('a multipart password field is redacted', async () => {
    const body = '--XB\r\nContent-Disposition: form-data; name="user"\r\n\r\nann\r\n--XB\r\nContent-Disposition: form-data; name="password"\r\n\r\nzqmp1\r\n--XB--\r\n';
    const har = await capture(exchange({
      method: 'POST', target: '/up', reqHeaders: ['Host', 'h:1', 'Content-Type', 'multipart/form-data; boundary=XB'], reqBody: [Buffer.from(body)], status: 204,
    }));
    const text = decodedText(har);
    assertNoSecret(text, ['zqmp1']);
    assert.ok(text.includes(P('zqmp1')), JSON.stringify(har.log.entries[0]!.request.postData));
    assert.ok(text.includes('name="user"\r\n\r\nann'), 'other fields stay');
  });

  it('a refused request (431, a 17 KiB Cookie) keeps no cookie and no credentials in _bb.rawPacket', async () => {
    const raw = Buffer.from(`GET /a?token=zqrq1 HTTP/1.1\r\nHost: h:1\r\nAuthorization: Basic zqcred1\r\nCookie: sid=zqck1; pad=${'x'.repeat(17 * 1024)}\r\n\r\n`);
    const har = await capture([{
      type: 'client-error', connectionId: 'c1', exchangeId: 90, time: TEST_T0,
      error: { code: 'HPE_HEADER_OVERFLOW', message: 'Header overflow', phase: 'parse' }, rawPacket: raw,
      response: { statusCode: 431, statusMessage: 'Request Header Fields Too Large', rawHeaders: ['Connection', 'close'], body: Buffer.alloc(0) },
    }]);
    const e = har.log.entries[0]!;
    assertNoSecret(decodedText(har), ['zqrq1', 'zqcred1', 'zqck1']);
    const kept = Buffer.from(e._bb!.rawPacket!, 'base64').toString('latin1');
    assert.ok(kept.startsWith('GET /a?token=<redacted:'), kept.slice(0, 60));
    assert.ok(kept.includes(`Authorization: Basic ${P('zqcred1')}`));
    assert.ok(kept.includes('Host: h:1\r\n'), 'what shows the fault stays');
  });

  it('a broken h2 connection keeps frame headers but no header block or data bytes in _bb.rawPacket', async () => {
    const literal = (name: string, value: string) =>
      Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
    const block = Buffer.concat([Buffer.from([0x82, 0x86, 0x84]), literal('authorization', 'Bearer zqh2sec1')]);
    const raw = Buffer.concat([PREFACE, h2Frame(T.SETTINGS, 0, 0), h2Frame(T.HEADERS, F.END_HEADERS, 1, block), h2Frame(T.DATA, 0, 1, Buffer.from('{"password":"zqh2sec2"}')), h2Frame(T.DATA, 0, 0, 'ff')]);
    const har = await capture([{
      type: 'client-error', connectionId: 'c1', exchangeId: 91, time: TEST_T0,
      error: { code: 'BB_H2_PROTOCOL_ERROR', message: 'the client broke HTTP/2: DATA on stream 0', phase: 'parse' }, rawPacket: raw,
    }]);
    assertNoSecret(decodedText(har), ['zqh2sec1', 'zqh2sec2']);
    const kept = Buffer.from(har.log.entries[0]!._bb!.rawPacket!, 'base64');
    assert.equal(kept.length, raw.length, 'frame lengths and positions stay');
    assert.ok(kept.subarray(0, PREFACE.length).equals(PREFACE));
  });

  it('--no-redact keeps every value (the searches above can fail)', async () => {
    const raw = Buffer.from('GET / HTTP/1.1\r\nCookie: sid=zqck2\r\n\r\n');
    const har = await capture([
      ...exchange({ target: '/x', status: 302, resHeaders: ['Location', '/cb#access_token=zqfrag2'] }),
      { type: 'client-error', connectionId: 'c1', exchangeId: 92, time: TEST_T0 + 5, error: { code: 'HPE_HEADER_OVERFLOW', message: 'x', phase: 'parse' }, rawPacket: raw },
    ], false);
    const text = decodedText(har);
    for (const s of ['zqfrag2', 'zqck2']) assert.ok(text.includes(s), s);
  });
});
