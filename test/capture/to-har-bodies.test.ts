// A body bb cannot decode (a Content-Encoding Node 20 lacks, an unknown one,
// or bytes the named coding does not undo — a plain JSON body mislabelled
// gzip) cannot be inspected for secrets. With redaction on it fails closed
// (issue 34, as JSON too deep to inspect): a body of a media type bb redacts
// is replaced by a marked placeholder keyed by its bytes (equal bodies stay
// equal, different ones differ); a binary media type is kept as sent. Real
// clients and a real server through a recording bb; the HAR is searched
// decoded (base64 bodies included), and --no-redact finds every secret.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { decodedStrings } from '../helpers/decoded.js';
import type { Har } from '../../capture/har.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

const SECRETS = ['zqund-mislabel', 'zqund-custom', 'zqund-zstd', 'zqund-req', 'zqund-form'];

/** Answers each path with a body whose Content-Encoding bb cannot undo. */
async function server(): Promise<string> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (secret: string) => JSON.stringify({ access_token: secret, n: 1 });
      if (req.url === '/mislabel') res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }).end(json(SECRETS[0]!));
      else if (req.url === '/custom') res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Encoding': 'x-custom' }).end(json(SECRETS[1]!));
      // Not real zstd (Node 20 has no encoder): bb says zstd cannot be decoded either way.
      else if (req.url === '/zstd') res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'zstd' }).end(`token=${SECRETS[2]}`);
      else if (req.url === '/png') res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Encoding': 'x-custom' }).end('\x89PNG binary');
      else res.end('ok');
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanups.add(() => new Promise<void>((r) => s.close(() => r())));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** A request (a POST with a body and a Content-Encoding its bytes do not have), its answer read whole as bytes. */
function send(port: number, path: string, post?: { type: string; coding: string; body: string | Buffer }): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers = post ? { 'Content-Type': post.type, 'Content-Encoding': post.coding } : {};
    const req = http.request({ host: '127.0.0.1', port, path, method: post ? 'POST' : 'GET', headers }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(post?.body);
  });
}

/** Sends every case through a recording bb; its HAR. */
async function recordAll(redact: boolean): Promise<Har> {
  const target = await server();
  const rec = await record(cleanups, target, redact ? {} : { redact: false });
  for (const path of ['/mislabel', '/custom', '/zstd', '/png', '/mislabel']) await send(rec.port, path);
  await send(rec.port, '/req', { type: 'application/json', coding: 'br', body: JSON.stringify({ password: SECRETS[3] }) });
  await send(rec.port, '/form', { type: 'application/x-www-form-urlencoded', coding: 'deflate', body: `user=ann&password=${SECRETS[4]}` });
  return rec.finish();
}

const leaked = (har: Har) => {
  const text = decodedStrings(har).join('\n');
  return SECRETS.filter((s) => text.includes(s));
};

describe('a body bb cannot decode, with redaction on', () => {
  it('is replaced by a marked placeholder when its media type is one bb redacts; the HAR, decoded, holds no secret', async () => {
    const har = await recordAll(true);
    assert.deepEqual(leaked(har), []);
    const byPath = (p: string) => har.log.entries.filter((e) => new URL(e.request.url).pathname === p);
    const [first, again] = byPath('/mislabel');
    const content = first!.response.content;
    assert.match(content.text!, /^<redacted: gzip: does not decode .*; \d+ bytes not kept, <redacted:[0-9a-f]{8}>>$/, content.text);
    assert.equal(content.encoding, undefined, 'the placeholder is text');
    assert.match(content._bbUndecoded!, /^gzip: does not decode/);
    assert.equal(again!.response.content.text, content.text, 'the same bytes give the same placeholder');
    assert.notEqual(byPath('/custom')[0]!.response.content.text, content.text, 'other bytes another');
    assert.match(byPath('/zstd')[0]!.response.content.text!, /^<redacted: zstd: /);
    assert.match(byPath('/req')[0]!.request.postData!.text, /^<redacted: br: does not decode/);
    assert.match(byPath('/form')[0]!.request.postData!.text, /^<redacted: deflate: does not decode/);
    // A binary media type is not searched for secrets by bb at all: kept as sent.
    const png = byPath('/png')[0]!.response.content;
    assert.equal(png.encoding, 'base64');
    assert.equal(Buffer.from(png.text!, 'base64').toString('utf8'), '\x89PNG binary');
  });

  it('is kept as sent with --no-redact (the search above can fail)', async () => {
    assert.deepEqual(leaked(await recordAll(false)), SECRETS);
  });
});

// A compression bomb (or a huge repetitive log): 600 KB of gzip on the wire
// that decodes to 600 MiB. Decoding it whole made the HAR unwritable ("Cannot
// create a string longer than 0x1fffffe8 characters", 2.1 GB RSS) and `bb
// recover` failed the same way, so every exchange of the capture was lost. A
// body decodes to 64 MiB at most (capture/body.ts DECODED_BODY_CAP); past it,
// it is kept as sent.
describe('a body that decodes to more than bb holds', () => {
  const member = gzipSync(Buffer.alloc(1048576, 'a'));
  const bomb = Buffer.concat(Array.from({ length: 600 }, () => member));

  async function bombServer(): Promise<string> {
    const s = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const type = req.url === '/json' ? 'application/json' : req.url === '/bin' ? 'application/octet-stream' : 'text/plain';
        if (req.url === '/small') res.writeHead(200, { 'Content-Type': type, 'Content-Encoding': 'gzip' }).end(gzipSync('{"a":1}'));
        else res.writeHead(200, { 'Content-Type': type, 'Content-Encoding': 'gzip', 'Content-Length': bomb.length }).end(bomb);
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise<void>((r) => s.close(() => r())));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  async function recordBombs(redact: boolean): Promise<Har> {
    const rec = await record(cleanups, await bombServer(), redact ? {} : { redact: false });
    for (const path of ['/text', '/json', '/bin', '/small']) await send(rec.port, path);
    await send(rec.port, '/upload', { type: 'application/json', coding: 'gzip', body: bomb });
    return rec.finish();
  }
  const WHY = 'gzip: decodes to more than 67108864 bytes, body kept as sent';

  it('is kept as sent, marked; the capture is written with every exchange', async () => {
    const har = await recordBombs(false);
    assert.deepEqual(har.log.entries.map((e) => new URL(e.request.url).pathname), ['/text', '/json', '/bin', '/small', '/upload']);
    for (const e of har.log.entries.slice(0, 3)) {
      const c = e.response.content;
      assert.equal(c._bbUndecoded, WHY, e.request.url);
      assert.equal(c.encoding, 'base64');
      assert.ok(Buffer.from(c.text!, 'base64').equals(bomb), 'the bytes as sent');
    }
    assert.equal(har.log.entries[3]!.response.content.text, '{"a":1}', 'a body under the cap is decoded as before');
    const post = har.log.entries[4]!.request.postData!;
    assert.equal(post._encoding, 'base64');
    assert.ok(Buffer.from(post.text, 'base64').equals(bomb));
  });

  it('with redaction on, a type bb searches for secrets is a placeholder keyed by its bytes; a binary one stays as sent', async () => {
    const har = await recordBombs(true);
    const [text, json, bin] = har.log.entries.map((e) => e.response.content);
    assert.match(text!.text!, new RegExp(`^<redacted: gzip: decodes to more than 67108864 bytes; ${bomb.length} bytes not kept, <redacted:[0-9a-f]{8}>>$`));
    assert.equal(json!.text, text!.text, 'the same bytes, the same placeholder');
    assert.ok(Buffer.from(bin!.text!, 'base64').equals(bomb));
    assert.match(har.log.entries[4]!.request.postData!.text, /^<redacted: gzip: decodes to more than/);
  });
});

// A response body is redacted as a request body of its media type is: form
// and multipart were redacted in postData only, so a server echoing a form,
// or an OAuth token endpoint answering `access_token=…` as a form (GitHub's
// does by default), kept its secrets in response.content.text. An echo server
// answers each body with its own Content-Type (a multipart with a binary part
// is base64 in the HAR; the search decodes it), one answer gzip-encoded.
describe('a response body of form or multipart type', () => {
  const FORM = 'user=ann&password=zqresp-form';
  const FORM_ENCODED_NAME = 'user=ann&pass%77ord=zqresp-encname';
  const MULTIPART = [
    '--B0\r\nContent-Disposition: form-data; name="password"\r\n\r\nzqresp-multipass\r\n',
    '--B0\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{"token":"zqresp-multijson"}\r\n',
    '--B0\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\nbin\x00\x01\r\n',
    '--B0--\r\n',
  ].join('');
  const OAUTH = 'access_token=zqresp-oauth&token_type=bearer&scope=repo';
  const RESPONSE_SECRETS = ['zqresp-form', 'zqresp-encname', 'zqresp-multipass', 'zqresp-multijson', 'zqresp-oauth', 'zqresp-gzform'];

  async function echoServer(): Promise<string> {
    const s = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
        if (req.url === '/oauth') res.writeHead(200, form).end(OAUTH);
        else if (req.url === '/gzform') res.writeHead(200, { ...form, 'Content-Encoding': 'gzip' }).end(gzipSync('refresh_token=zqresp-gzform&n=1'));
        else res.writeHead(200, { 'Content-Type': req.headers['content-type'] }).end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise<void>((r) => s.close(() => r())));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  async function recordEchoes(redact: boolean): Promise<Har> {
    const rec = await record(cleanups, await echoServer(), redact ? {} : { redact: false });
    const post = (type: string, body: string) => send(rec.port, '/echo', { type, coding: 'identity', body: Buffer.from(body, 'latin1') });
    await post('application/x-www-form-urlencoded', FORM);
    await post('application/x-www-form-urlencoded; charset=utf-8', FORM_ENCODED_NAME);
    await post('multipart/form-data; boundary=B0', MULTIPART);
    await send(rec.port, '/oauth');
    await send(rec.port, '/gzform');
    return rec.finish();
  }

  const leakedHere = (har: Har) => {
    const text = decodedStrings(har).join('\n');
    return RESPONSE_SECRETS.filter((s) => text.includes(s));
  };

  it('has its secrets redacted as the request body of that type has: an echo reads the same both ways', async () => {
    const har = await recordEchoes(true);
    assert.deepEqual(leakedHere(har), []);
    const [form, encodedName, multipart, oauth, gzform] = har.log.entries;
    for (const e of [form!, encodedName!, multipart!]) {
      assert.equal(e.response.content.text, e.request.postData!.text, `${e.request.postData!.mimeType}: the echo is recorded as the request is`);
      assert.equal(e.response.content.encoding, e.request.postData!._encoding);
    }
    assert.match(form!.response.content.text!, /^user=ann&password=<redacted:[0-9a-f]{8}>$/);
    assert.match(oauth!.response.content.text!, /^access_token=<redacted:[0-9a-f]{8}>&token_type=bearer&scope=repo$/);
    assert.match(gzform!.response.content.text!, /^refresh_token=<redacted:[0-9a-f]{8}>&n=1$/);
    assert.equal(oauth!.response.content.comment, 'secret form values redacted');
    // The multipart's binary part makes it base64; its framing and other parts stay.
    const parts = Buffer.from(multipart!.response.content.text!, 'base64').toString('latin1');
    assert.match(parts, /name="password"\r\n\r\n<redacted:[0-9a-f]{8}>\r\n/);
    assert.match(parts, /\{"token":"<redacted:[0-9a-f]{8}>"\}/);
    assert.ok(parts.includes('bin\x00\x01\r\n--B0--\r\n'));
  });

  it('keeps every value with --no-redact (the search above can fail)', async () => {
    assert.deepEqual(leakedHere(await recordEchoes(false)), RESPONSE_SECRETS);
  });
});
