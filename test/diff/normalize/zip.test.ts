import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readZip, decodeZipName, isZipBody, DEFAULT_ZIP_LIMITS } from '../../../diff/normalize/zip.js';
import { diffCaptures } from '../../../diff/index.js';
import type { Har } from '../../../capture/har.js';
import { capture } from '../../helpers/har.js';
import { makeZip, type ZipSpec } from '../zip-builder.js';
import { tempDir } from '../../helpers/tmp.js';

const session = (id: string, model = 'm1') => JSON.stringify({ id, model, created_at: '2026-01-01T00:00:00Z' });

function bundle(over: Partial<Record<string, Partial<ZipSpec>>> = {}): Buffer {
  const specs: ZipSpec[] = [
    { name: 'export/', data: '', method: 0 },
    { name: 'export/session.json', data: session('s-1') },
    { name: 'export/events.jsonl', data: '{"type":"start","at":"2026-01-01T00:00:01Z"}\n{"type":"stop"}\n' },
    { name: 'export/README.md', data: '# Export\nmade at 2026-01-01T00:00:02Z in 127.0.0.1:4567\n' },
    { name: 'export/logo.png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0xff, 0xfe]), method: 0 },
  ];
  return makeZip(specs.map((s) => ({ ...s, ...(over[s.name] ?? {}) })));
}

/** A capture with one GET /export whose response body is `zip` (base64), plus a JSON entry. */
function zipCapture(zip: Buffer, mime = 'application/zip'): Har {
  const har = capture([{ url: 'http://127.0.0.1:3001/export', body: 'x' }, { url: 'http://127.0.0.1:3001/ok', body: { ok: true } }]);
  const e = har.log.entries[0]!;
  e.response.content = { size: zip.length, mimeType: mime, text: zip.toString('base64'), encoding: 'base64' };
  e.response.headers = [{ name: 'Content-Type', value: mime }];
  return har;
}

describe('zip bodies: reading', () => {
  it('lists JSON, JSONL, markdown and binary entries; folders add no entry', async () => {
    const v = await readZip(bundle());
    assert.deepEqual(v, {
      entries: {
        'export/session.json': { id: 's-1', model: 'm1', created_at: '2026-01-01T00:00:00Z' },
        'export/events.jsonl': [{ type: 'start', at: '2026-01-01T00:00:01Z' }, { type: 'stop' }],
        'export/README.md': '# Export\nmade at 2026-01-01T00:00:02Z in 127.0.0.1:4567\n',
        'export/logo.png': '<binary 10 bytes>',
      },
    });
  });

  it('tells zips by media type or by the PK\\x03\\x04 magic bytes', () => {
    assert.equal(isZipBody('application/zip', undefined), true);
    assert.equal(isZipBody('application/x-zip-compressed', undefined), true);
    assert.equal(isZipBody('application/octet-stream', Buffer.from('504b0304aa', 'hex')), true);
    assert.equal(isZipBody('application/octet-stream', Buffer.from('504b0506aa', 'hex')), false);
    assert.equal(isZipBody('text/plain', Buffer.from('hello')), false);
  });

  it('decodes names as UTF-8 first and CP437 when they are not UTF-8', async () => {
    assert.equal(decodeZipName(Buffer.from('café.txt', 'utf8')), 'café.txt');
    assert.equal(decodeZipName(Buffer.from([0x63, 0x61, 0x66, 0x82, 0x2e, 0x74, 0x78, 0x74])), 'café.txt');
    const v = await readZip(makeZip([{ name: 'x', nameBytes: Buffer.from([0x8e, 0x2e, 0x74, 0x78, 0x74]), data: 'hi' }]));
    assert.deepEqual(v, { entries: { 'Ä.txt': 'hi' } });
  });

  it('a corrupt zip is a zipError value, not a throw', async () => {
    const good = bundle();
    const broken = Buffer.from(good);
    broken.writeUInt32LE(0xdeadbeef, broken.length - 22); // end-of-central-directory signature
    const v1 = await readZip(broken);
    assert.ok('zipError' in v1 && /not a readable zip/.test(v1.zipError), JSON.stringify(v1));
    const cut = await readZip(good.subarray(0, 40));
    assert.ok('zipError' in cut, JSON.stringify(cut));
    // A deflated stream with garbage inside: the central directory is fine, inflating fails.
    const z = makeZip([{ name: 'a.json', data: '{"a":1}'.repeat(50) }]);
    z.fill(0xff, 30 + 'a.json'.length, 30 + 'a.json'.length + 8);
    const v3 = await readZip(z);
    assert.ok('zipError' in v3 && /a\.json/.test(v3.zipError), JSON.stringify(v3));
  });

  it('unsafe names (.., absolute) are a zipError', async () => {
    const v = await readZip(makeZip([{ name: '../evil.txt', data: 'x' }]));
    assert.ok('zipError' in v && /climbs out/.test(v.zipError), JSON.stringify(v));
  });

  it('a zip bomb that lies about its size stops at the declared size', async () => {
    const bomb = makeZip([{ name: 'bomb.txt', data: Buffer.alloc(8 * 1024 * 1024), declaredSize: 100 }]);
    assert.ok(bomb.length < 64 * 1024, `bomb is ${bomb.length} bytes compressed`);
    const before = process.memoryUsage().rss;
    const v = await readZip(bomb);
    assert.ok('zipError' in v && /bomb\.txt/.test(v.zipError), JSON.stringify(v));
    assert.ok(process.memoryUsage().rss - before < 64 * 1024 * 1024);
  });

  it('a zip declaring more than the inflated cap is refused before inflating', async () => {
    const big = makeZip([{ name: 'a.txt', data: 'small' }, { name: 'huge.log', data: Buffer.alloc(1000), declaredSize: DEFAULT_ZIP_LIMITS.maxTotalBytes + 1 }]);
    const v = await readZip(big);
    assert.ok('zipError' in v && /past the cap/.test(v.zipError) && /huge\.log/.test(v.zipError), JSON.stringify(v));
  });

  it('a bomb under every declared cap is cut once its inflated bytes pass the cap', async () => {
    // Each entry tells the truth, but together they pass a 1 MiB cap.
    const specs = Array.from({ length: 5 }, (_, i) => ({ name: `part${i}.txt`, data: Buffer.alloc(300 * 1024, 0x41) }));
    const v = await readZip(makeZip(specs), { maxTotalBytes: 1024 * 1024, maxEntries: 100 });
    assert.ok('zipError' in v && /past the cap of 1048576/.test(v.zipError), JSON.stringify(v));
  });

  it('caps the entry count', async () => {
    const specs = Array.from({ length: 30 }, (_, i) => ({ name: `f${i}.txt`, data: 'x', method: 0 as const }));
    const v = await readZip(makeZip(specs), { maxTotalBytes: 1 << 20, maxEntries: 20 });
    assert.ok('zipError' in v && /30 entries/.test(v.zipError), JSON.stringify(v));
  });
});

describe('zip bodies: bb diff', () => {

  async function diffZips(a: Har, b: Har) {
    const dir = tempDir();
    return diffCaptures(await dir.write('old.har', a), await dir.write('new.har', b));
  }

  it('matches when only mtimes and normalized values differ', async () => {
    const a = bundle({ 'export/session.json': { mtime: 0x1234 } });
    const b = makeZip([
      { name: 'export/', data: '', method: 0, mtime: 0x7777 },
      { name: 'export/session.json', data: JSON.stringify({ id: 's-1', model: 'm1', created_at: '2026-01-01T05:05:05Z' }), mtime: 0x7777 },
      // Times of this run (inside the capture's window, as a fresh export's are).
      { name: 'export/events.jsonl', data: '{"type":"start","at":"2026-01-01T09:09:09Z"}\n{"type":"stop"}\n', method: 0 },
      { name: 'export/README.md', data: '# Export\nmade at 2026-01-01T20:00:02Z in 127.0.0.1:9999\n' },
      { name: 'export/logo.png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 9, 9, 9, 9, 9, 9]), method: 0 },
    ]);
    const r = await diffZips(zipCapture(a), zipCapture(b));
    assert.deepEqual(r.differences, []);
    assert.equal(r.verdict, 'match');
  });

  it('reports a changed entry with the entry name in the path', async () => {
    const r = await diffZips(zipCapture(bundle()), zipCapture(bundle({ 'export/session.json': { data: session('s-1', 'm2') } })));
    assert.equal(r.verdict, 'diff');
    assert.deepEqual(r.differences.map((d) => [d.kind, d.path, d.old, d.new]), [['changed', 'response.body.entries["export/session.json"].model', 'm1', 'm2']]);
  });

  it('reports a binary entry by size, and an added entry by name', async () => {
    const b = makeZip([
      { name: 'export/session.json', data: session('s-1') },
      { name: 'export/events.jsonl', data: '{"type":"start","at":"2026-01-01T00:00:01Z"}\n{"type":"stop"}\n' },
      { name: 'export/README.md', data: '# Export\nmade at 2026-01-01T00:00:02Z in 127.0.0.1:4567\n' },
      { name: 'export/logo.png', data: Buffer.alloc(12, 1) },
      { name: 'export/extra.txt', data: 'new' },
    ]);
    const r = await diffZips(zipCapture(bundle()), zipCapture(b, 'application/octet-stream'));
    // The new side is served as octet-stream: read as a zip by its magic bytes.
    const rows = r.differences.filter((d) => d.path.startsWith('response.body')).map((d) => [d.kind, d.path, d.old ?? null, d.new ?? null]);
    assert.deepEqual(rows, [
      ['changed', 'response.body.entries["export/logo.png"]', '<binary 10 bytes>', '<binary 12 bytes>'],
      ['added', 'response.body.entries["export/extra.txt"]', null, 'new'],
    ]);
  });

  it('a corrupt zip on one side is a difference row that says so', async () => {
    const broken = bundle().subarray(0, 60);
    const r = await diffZips(zipCapture(bundle()), zipCapture(broken));
    assert.equal(r.verdict, 'diff');
    const row = r.differences.find((d) => d.path === 'response.body.zipError');
    assert.ok(row, JSON.stringify(r.differences.map((d) => d.path)));
    assert.equal(row.kind, 'added');
    assert.match(String(row.new), /not a readable zip/);
  });

  it('a zip bomb on one side is a difference row, not an out-of-memory', async () => {
    const bomb = makeZip([{ name: 'bomb.txt', data: Buffer.alloc(16 * 1024 * 1024), declaredSize: 10 }]);
    const r = await diffZips(zipCapture(bundle()), zipCapture(bomb));
    const row = r.differences.find((d) => d.path === 'response.body.zipError');
    assert.ok(row && /bomb\.txt/.test(String(row.new)), JSON.stringify(r.differences));
  });

  it('reads zip request bodies too', async () => {
    const mk = (model: string) => {
      const har = capture([{ method: 'POST', url: 'http://127.0.0.1:3001/import', requestBody: 'x', body: { ok: true } }]);
      const zip = makeZip([{ name: 'session.json', data: session('s-9', model) }]);
      har.log.entries[0]!.request.postData = { mimeType: 'application/zip', text: zip.toString('base64'), _encoding: 'base64' };
      return har;
    };
    const r = await diffZips(mk('a'), mk('b'));
    assert.deepEqual(r.differences.map((d) => d.path), ['request.body.entries["session.json"].model']);
  });
});
