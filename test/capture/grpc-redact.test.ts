// A JWT in a gRPC message is masked in the body HAR records, not only in
// `_grpcMessages`: a message compressed by grpc-encoding gzip, or framed in
// gRPC-Web-text's base64, kept the token in postData.text and content.text,
// one gunzip (or a second base64 decoding) away. Real clients and servers
// (a @grpc/grpc-js client sending gzip to a node:http2 server answering
// gzip, h2c; gRPC-Web-text over HTTP/1)
// through a recording bb; the HAR is searched with every body decoded: base64
// (twice), gzip anywhere in the bytes.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { decodedStrings } from '../helpers/decoded.js';
import { decodeItem, encodeItem, itemMethod, type ItemValue } from '../helpers/grpc-items.js';
import type { Har } from '../../capture/har.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

const jwt = (sub: string) => `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(`{"sub":"${sub}"}`).toString('base64url')}.c2lnbmF0dXJl`;
const GZIP_JWT = jwt('zqgrpc-gzip');
const WEB_TEXT_JWT = jwt('zqgrpc-webtext');
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** Every reading of a byte string a reader could try: itself, its base64 decoded, and any gzip member inside it inflated. */
function readings(bytes: Buffer, depth = 0, out: string[] = []): string[] {
  const text = bytes.toString('latin1');
  out.push(text);
  if (depth > 2) return out;
  for (let at = bytes.indexOf(GZIP_MAGIC); at >= 0; at = bytes.indexOf(GZIP_MAGIC, at + 1)) {
    try {
      readings(gunzipSync(bytes.subarray(at)), depth + 1, out);
    } catch {
      // not a gzip member, or one cut short
    }
  }
  if (/^[A-Za-z0-9+/=\s]{8,}$/.test(text)) readings(Buffer.from(text, 'base64'), depth + 1, out);
  return out;
}

/** Which tokens the HAR holds in any reading of any of its strings. */
function leaked(har: Har, tokens: string[]): string[] {
  const all = decodedStrings(har).flatMap((s) => readings(Buffer.from(s, 'latin1'))).join('\n');
  return tokens.filter((t) => all.includes(t) || all.includes(t.split('.')[1]!));
}

const ECHO = { echo: itemMethod('/demo.Items/Echo', false, false) };

/**
 * A gRPC server on node:http2 (grpc-js's server does not compress its answers): answers each call with the message
 * it was sent, gzip-compressed (grpc-encoding gzip).
 */
async function gzipServer(): Promise<number> {
  const server = http2.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const frame = Buffer.concat(chunks);
      const payload = frame.subarray(5, 5 + frame.readUInt32BE(1));
      const message = frame[0]! & 1 ? gunzipSync(payload) : payload;
      const zipped = gzipSync(message);
      const prefix = Buffer.from([1, 0, 0, 0, 0]);
      prefix.writeUInt32BE(zipped.length, 1);
      res.writeHead(200, { 'content-type': 'application/grpc', 'grpc-encoding': 'gzip' });
      res.addTrailers({ 'grpc-status': '0' });
      res.end(Buffer.concat([prefix, zipped]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.add(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

/** One unary call through `port` with gzip on (grpc-encoding gzip). */
async function callGzip(port: number, name: string): Promise<void> {
  const Client = grpc.makeGenericClientConstructor(ECHO as unknown as grpc.ServiceDefinition, 'Items');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 }) as unknown as
    Record<string, (...a: unknown[]) => unknown> & grpc.Client;
  try {
    const got = await new Promise<ItemValue>((resolve, reject) => client.echo!({ name, n: 0 }, (err: Error | null, v: ItemValue) => (err ? reject(err) : resolve(v))));
    assert.equal(got.name, name);
  } finally {
    client.close();
  }
}

/** A gRPC-Web-text server over HTTP/1: answers the message it was sent, then a trailer frame, in base64. */
async function webTextServer(): Promise<string> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const frames = Buffer.from(Buffer.concat(chunks).toString('latin1'), 'base64');
      const trailer = Buffer.from('grpc-status: 0\r\n');
      const head = Buffer.from([0x80, 0, 0, 0, trailer.length]);
      res.writeHead(200, { 'Content-Type': 'application/grpc-web-text' });
      res.end(Buffer.concat([frames, head, trailer]).toString('base64'));
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanups.add(() => new Promise<void>((r) => s.close(() => r())));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** One framed message, base64 (gRPC-Web-text), POSTed through `port`. */
function callWebText(port: number, name: string): Promise<void> {
  const message = encodeItem({ name, n: 0 });
  const prefix = Buffer.from([0, 0, 0, 0, message.length]);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/demo.Items/Echo', method: 'POST', headers: { 'Content-Type': 'application/grpc-web-text' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(Buffer.concat([prefix, message]).toString('base64'));
  });
}

async function recordBoth(redact: boolean): Promise<Har> {
  const gz = await record(cleanups, `http://127.0.0.1:${await gzipServer()}`, redact ? {} : { redact: false });
  await callGzip(gz.port, GZIP_JWT);
  const gzHar = await gz.finish();
  const web = await record(cleanups, await webTextServer(), redact ? {} : { redact: false });
  await callWebText(web.port, WEB_TEXT_JWT);
  const webHar = await web.finish();
  return { log: { ...gzHar.log, entries: [...gzHar.log.entries, ...webHar.log.entries] } };
}

describe('a JWT in a compressed or base64-framed gRPC message', () => {
  it('is masked in the recorded bodies too; they still hold the messages, redacted', async () => {
    const har = await recordBoth(true);
    assert.deepEqual(leaked(har, [GZIP_JWT, WEB_TEXT_JWT]), []);
    const [gz, web] = har.log.entries;
    assert.ok(gz!._grpcMessages!.every((m) => m.compressed), `the call was compressed both ways: ${JSON.stringify(gz!._grpcMessages!.map((m) => [m.type, m.compressed]))}`);
    for (const e of [gz!, web!]) {
      for (const [what, body] of [['request', e.request.postData!.text], ['response', e.response.content.text!]] as const) {
        assert.match(e[what === 'request' ? 'request' : 'response'].headers.find((h) => h.name.toLowerCase() === 'content-type')!.value, /^application\/grpc/);
        // The body still frames its message: read it back, the masked JWT at the token's length.
        let frames = Buffer.from(body, 'base64');
        if (e === web) frames = Buffer.from(frames.toString('latin1'), 'base64');
        assert.equal(frames[0]! & 1, 0, `${what}: the redacted message is kept decompressed (or was sent so)`);
        const name = decodeItem(frames.subarray(5, 5 + frames.readUInt32BE(1))).name;
        assert.match(name, /^<redacted:[0-9a-f]{8}~+>$/, `${what}: ${name}`);
        assert.equal(name.length, (e === gz ? GZIP_JWT : WEB_TEXT_JWT).length);
        const comment = what === 'request' ? e.request.postData!.comment : e.response.content.comment;
        if (e === gz) assert.equal(comment, 'redacted: 1 compressed gRPC message kept decompressed, JWTs masked; bytes differ from the wire');
      }
    }
  });

  it('is kept with --no-redact (the search above can fail)', async () => {
    assert.deepEqual(leaked(await recordBoth(false), [GZIP_JWT, WEB_TEXT_JWT]), [GZIP_JWT, WEB_TEXT_JWT]);
  });
});
