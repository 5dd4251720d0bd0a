// gRPC messages read as protobuf, not hex (issue 38): a real grpc-js server
// on 127.0.0.1:0 called through `bb capture --ui`, a unary call, a server
// stream and a gzipped unary call. In headless Debian chromium the opened
// exchange shows each message as a field tree (a string's text, a nested
// message's fields, an int) with its hex one click away, and a hostile string
// field shows as text and runs nothing; `bb frames` (and --timeline, --html)
// of the written capture show the same messages decoded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openGrpcMessages as openMessages, openLiveView } from '../helpers/live-view.js';
import { runBb, startBb, type BbProcess } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';

// Query { name = 1; n = 2 }  Reply { title = 1; count = 2; Inner inner = 3 { note = 1; id = 2 }; repeated string tags = 4 }
const Inner = new protobuf.Type('Inner').add(new protobuf.Field('note', 1, 'string')).add(new protobuf.Field('id', 2, 'uint64'));
const Query = new protobuf.Type('Query').add(new protobuf.Field('name', 1, 'string')).add(new protobuf.Field('n', 2, 'int32'));
const Reply = new protobuf.Type('Reply')
  .add(new protobuf.Field('title', 1, 'string'))
  .add(new protobuf.Field('count', 2, 'int32'))
  .add(new protobuf.Field('inner', 3, 'Inner'))
  .add(new protobuf.Field('tags', 4, 'string', 'repeated'));
new protobuf.Root().define('shop').add(Inner).add(Query).add(Reply);

type Msg = Record<string, unknown>;
const codec = (t: protobuf.Type) => ({
  serialize: (v: Msg) => Buffer.from(t.encode(t.create(v)).finish()),
  deserialize: (b: Buffer) => t.toObject(t.decode(b), { longs: Number }) as Msg,
});
const method = (path: string, responseStream: boolean) => ({
  path, requestStream: false, responseStream,
  requestSerialize: codec(Query).serialize, requestDeserialize: codec(Query).deserialize,
  responseSerialize: codec(Reply).serialize, responseDeserialize: codec(Reply).deserialize,
});
const GET = method('/shop.Catalog/Get', false);
const LIST = method('/shop.Catalog/List', true);

/** Captured content is hostile: markup in a string field must show as text. */
const HOSTILE = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

const cleanups = new Cleanups();
const dir = tempDir(cleanups).dir;
const har = join(dir, 'grpc.har');
let browser: Browser | undefined;
let page: Page;
let bb: BbProcess;
let proxy = '';
let complaints: string[] = [];
let elsewhere: string[] = [];

before(async () => {
  if (!CHROMIUM) return;
  const server = new grpc.Server();
  server.addService({ get: GET, list: LIST } as unknown as grpc.ServiceDefinition, {
    get: (call: grpc.ServerUnaryCall<Msg, Msg>, done: grpc.sendUnaryData<Msg>) =>
      done(null, { title: HOSTILE, count: 42, inner: { note: 'deep note', id: 7 }, tags: ['a-tag', 'b-tag'] }),
    list: (call: grpc.ServerWritableStream<Msg, Msg>) => {
      for (let i = 0; i < Number(call.request['n']); i++) call.write({ title: `row ${i}`, count: 100 + i, inner: { note: `inner ${i}`, id: 9 } });
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.add(() => new Promise<void>((r) => server.tryShutdown(() => r())));
  bb = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--ui', '--out', har], { BB_HOME: join(dir, 'home') }, { timeoutMs: 120_000 });
  cleanups.add(async () => {
    if (bb.child.exitCode === null) bb.child.kill('SIGINT'); // the last test stops it itself
    await bb.exited;
  });
  proxy = (await bb.waitFor(/bb: capture: (http:\/\/127\.0\.0\.1:\d+) ->/))[1]!;
  ({ browser, page, elsewhere, complaints } = await openLiveView(await liveViewUrl(bb), { width: 1280, height: 900 }));
  cleanups.add(() => browser!.close());

  const Client = grpc.makeGenericClientConstructor({ get: GET, list: LIST } as unknown as grpc.ServiceDefinition, 'Catalog');
  const client = new Client(proxy.replace('http://', ''), grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    get(req: Msg, done: (err: Error | null, v?: Msg) => void): void;
    list(req: Msg): grpc.ClientReadableStream<Msg>;
  };
  const got = await new Promise<Msg>((resolve, reject) => client.get({ name: 'one', n: 1 }, (err, v) => (err ? reject(err) : resolve(v!))));
  assert.equal(got['title'], HOSTILE);
  const rows: Msg[] = [];
  const call = client.list({ name: 'all', n: 2 });
  call.on('data', (m: Msg) => rows.push(m));
  await new Promise((r) => call.on('status', r));
  client.close();
  assert.deepEqual(rows.map((r) => r['title']), ['row 0', 'row 1']);
  // A client that gzips its messages (grpc-encoding gzip): bb records them inflated.
  const zipping = new Client(proxy.replace('http://', ''), grpc.credentials.createInsecure(), { 'grpc.default_compression_algorithm': 2 }) as typeof client;
  await new Promise<Msg>((resolve, reject) => zipping.get({ name: 'zipped', n: 3 }, (err, v) => (err ? reject(err) : resolve(v!))));
  zipping.close();
});

after(() => cleanups.run());

test('an opened unary gRPC call shows its messages decoded: strings as text, nested fields, ints, repeated fields; the hex one click away', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const trees = await openMessages(page, '/shop.Catalog/Get', 2);
  assert.deepEqual(trees[0], ['1 string one', '2 varint 1']);
  assert.deepEqual(trees[1], [`1 string ${HOSTILE}`, '2 varint 42', '3 message', '1 string deep note', '2 varint 7', '4 string a-tag', '4 string b-tag']);
  // The nested message's fields sit inside its own box, under it.
  assert.equal(await page.locator('.detail .messages .proto').nth(1).evaluate((b) => b.querySelector(':scope > .pf-fields')?.textContent ?? ''), '1stringdeep note2varint7');
  // Markup in a string field is text: no element made of it, nothing run.
  assert.equal(await page.$$eval('.detail .messages script, .detail .messages img', (e) => e.length), 0);
  assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  // The hex dump stays one click away.
  const hex = page.locator('.detail .messages details.hex-of').nth(1);
  assert.equal(await hex.locator('pre.hex').isVisible(), false);
  await hex.locator('summary').click();
  assert.match((await hex.locator('pre.hex').textContent())!, /^00000000  0a 50 3c 2f 73 63 72 69 70 74 3e/);
  assert.deepEqual(elsewhere, []);
  assert.deepEqual(complaints, []);
});

test('an opened server stream shows each message it sent decoded', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const trees = await openMessages(page, '/shop.Catalog/List', 3);
  assert.deepEqual(trees, [
    ['1 string all', '2 varint 2'],
    ['1 string row 0', '2 varint 100', '3 message', '1 string inner 0', '2 varint 9'],
    ['1 string row 1', '2 varint 101', '3 message', '1 string inner 1', '2 varint 9'],
  ]);
  assert.deepEqual(complaints, []);
});

test('bb frames, --timeline and --html of the written capture show the messages decoded', async (t) => {
  if (!browser) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  bb.child.kill('SIGINT');
  assert.equal(await bb.exited, 0);
  const text = await runBb(['frames', har], { COLUMNS: '300' });
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.split('\n');
  const has = (re: RegExp) => assert.ok(lines.some((l) => re.test(l)), `no line matches ${re}:\n${text.stdout}`);
  has(/→ grpc\s+\S+\s+\{1: "one", 2: 1\}$/);
  has(/→ grpc\s+\S+\s+\{1: "zipped", 2: 3\}$/);
  const zipped = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: Array<{ _grpcMessages?: Array<{ type: string; compressed: boolean }> }> } }).log.entries[2]!;
  assert.equal(zipped._grpcMessages![0]!.compressed, true, 'the client gzipped its message');
  has(/← grpc\s+\S+\s+\{1: "<\/script><script>window\.__pwned=1<\/script><img src=x onerror=\\"window\.__pwned=2\\">", 2: 42, 3: \{1: "deep note", 2: 7\}, 4: "a-tag", 4: "b-tag"\}$/);
  has(/← grpc\s+\S+\s+\{1: "row 1", 2: 101, 3: \{1: "inner 1", 2: 9\}\}$/);
  const timeline = await runBb(['frames', har, '--timeline'], { COLUMNS: '300' });
  assert.match(timeline.stdout, /← grpc\s+\S+\s+\{1: "row 0", 2: 100, 3: \{1: "inner 0", 2: 9\}\}$/m);

  const html = join(dir, 'frames.html');
  const out = await runBb(['frames', har, '--html', html]);
  assert.equal(out.code, 0, out.stderr);
  const page2 = await browser!.newPage();
  await page2.goto('file://' + html);
  await page2.evaluate(() => {
    const rows = [...document.querySelectorAll<HTMLElement>('.row')];
    rows.find((r) => /__pwned=1/.test(r.textContent ?? ''))!.click();
  });
  const payload = (await page2.textContent('#panel-payload'))!;
  assert.equal(payload.split('\n\nhex:\n')[0], [`1  string  ${JSON.stringify(HOSTILE)}`, '2  varint  42', '3  message', '  1  string  "deep note"', '  2  varint  7', '4  string  "a-tag"', '4  string  "b-tag"'].join('\n'));
  assert.match(payload, /hex:\n00000000  0a 50 3c 2f/);
  assert.equal(await page2.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  assert.ok(!readFileSync(html, 'utf8').includes('<script>window.__pwned'), 'the page holds the hostile string escaped');
  await page2.close();
});
