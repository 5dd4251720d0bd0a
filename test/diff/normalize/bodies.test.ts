// multipart/form-data bodies: every client picks a random boundary per request,
// so two runs of the same upload differ only there. The boundary is masked in
// the Content-Type header and the body is compared part by part.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { diffCaptures, diffHars, loadDiffConfig, type DiffResult } from '../../../diff/index.js';
import { capture, uuid } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';

const FILE = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.alloc(40, 0xff)]); // not UTF-8

function multipart(boundary: string, note: string, file: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${note}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.gz"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

/** A capture of one upload as curl sends it (random boundary; base64 body when it is not UTF-8). */
function upload(note: string, file = FILE, asText = false) {
  const boundary = `------------------------${randomBytes(8).toString('hex')}`;
  const har = capture([{ method: 'POST', url: 'http://127.0.0.1:4000/upload', requestBody: 'x', body: { ok: true } }]);
  const e = har.log.entries[0]!;
  const mime = `multipart/form-data; boundary=${boundary}`;
  const body = multipart(boundary, note, file);
  e.request.headers.push({ name: 'Content-Type', value: mime });
  e.request.postData = asText ? { mimeType: mime, text: body.toString('utf8') } : { mimeType: mime, text: body.toString('base64'), _encoding: 'base64' } as never;
  return har;
}

describe('multipart bodies', () => {
  const t = tempDir();
  async function diff(a: unknown, b: unknown): Promise<DiffResult> {
    const n = uuid();
    return diffCaptures(await t.write(`${n}-a.har`, a), await t.write(`${n}-b.har`, b));
  }
  const rows = (r: DiffResult) => r.differences.map((d) => [d.kind, d.path, d.old, d.new]);

  it('the same upload with two random boundaries matches (binary and text bodies)', async () => {
    assert.deepEqual(rows(await diff(upload('hello'), upload('hello'))), []);
    const text = Buffer.from('plain file');
    assert.deepEqual(rows(await diff(upload('hello', text, true), upload('hello', text, true))), []);
  });

  it('a changed text field is one row naming the part; a changed file is one row on its bytes', async () => {
    const r = await diff(upload('hello'), upload('bye'));
    assert.deepEqual(rows(r), [['changed', 'request.body.parts[0].body', 'hello', 'bye']]);
    const f = await diff(upload('hello'), upload('hello', Buffer.concat([FILE, Buffer.from([0xfe])])));
    assert.deepEqual(f.differences.map((d) => [d.kind, d.path]), [['changed', 'request.body.parts[1].body']]);
    assert.match(String(f.differences[0]!.old), /^<binary 44 bytes sha256:[0-9a-f]{16}>$/);
  });

  it('is a built-in rule that normalize.disable switches off', async () => {
    const n = uuid();
    // generated-ids too: the boundary's random part is a generated token (B64_40) when multipart-boundary is off.
    const config = await t.write(`${n}-config.json`, { normalize: { disable: ['multipart-boundary', 'generated-ids'] } });
    const r = await diffCaptures(await t.write(`${n}-a.har`, upload('hello')), await t.write(`${n}-b.har`, upload('hello')), { config: await loadDiffConfig(config) });
    assert.deepEqual(r.differences.map((d) => d.path), ['request.headers.content-type']);
  });
});

// An SSE stream's `retry:` (core/event-stream.ts gives it to the next event) is compared with that event.
describe('event streams', () => {
  it('is compared by bb diff: a build that starts asking for a 100 ms reconnection is a finding', async () => {
    const sse = (text: string) => capture([{ url: 'http://127.0.0.1:1/events', body: text, mime: 'text/event-stream' }]);
    const base = 'event: tick\nid: 1\ndata: {"n":1}\n\n';
    const r = await diffHars({ name: 'a.har', har: sse(base) }, { name: 'b.har', har: sse(`retry: 100\n\n${base}`) });
    assert.deepEqual(r.differences.map((d) => [d.kind, d.path, d.new]), [['added', 'response.events[0].retry', 100]]);
    const same = await diffHars({ name: 'a.har', har: sse(`retry: 100\n${base}`) }, { name: 'b.har', har: sse(`retry: 100\n\n${base}`) });
    assert.equal(same.verdict, 'match');
  });
});
