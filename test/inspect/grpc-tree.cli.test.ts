// `bb frames --config` and `bb show --entry --body --config`: the .proto files
// the config lists (normalize.proto, as `bb diff --config` reads them) name a
// gRPC call's fields, request and response types by the call's method. Real
// traffic: a grpc-js server on 127.0.0.1:0 called through `bb capture`. A
// missing config or a broken .proto stops the command with one line, exit 2.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { runBb, startBb } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { driveItems, itemsServer, writeItemsConfig } from '../helpers/grpc-items.js';

const cleanups = new Cleanups();
const dir = tempDir(cleanups).dir;
const har = join(dir, 'items.har');
let config = '';
const bb = (args: string[]) => runBb(args, { COLUMNS: '200', BB_HOME: join(dir, 'home') });

before(async () => {
  config = writeItemsConfig(dir);
  const port = await itemsServer(cleanups, { lookupStatus: grpc.status.NOT_FOUND });
  const capture = startBb(['capture', '--target', `http://127.0.0.1:${port}`, '--out', har, '--quiet'], { BB_HOME: join(dir, 'home') });
  const proxy = (await capture.waitFor(/bb: capture: http:\/\/127\.0\.0\.1:(\d+) ->/))[1]!;
  assert.equal(await driveItems(Number(proxy)), grpc.status.NOT_FOUND);
  capture.child.kill('SIGINT');
  assert.equal(await capture.exited, 0);
});

after(() => cleanups.run());

describe('bb frames --config', () => {
  it('names the fields of each message by its method\'s request and response types', async () => {
    const out = await bb(['frames', har, '--config', config]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /→ grpc\s+\S+\s+\{name: "a", n: 1\}$/m);
    assert.match(out.stdout, /→ grpc\s+\S+\s+\{name: "b", n: 2\}$/m);
    assert.match(out.stdout, /← grpc\s+\S+\s+\{name: "stored b", n: 2\}$/m);
    // Without the config: field numbers, as before.
    const plain = await bb(['frames', har]);
    assert.match(plain.stdout, /← grpc\s+\S+\s+\{1: "stored b", 2: 2\}$/m);
  });

  it('names them in --timeline, --html\'s rows and payload panel too', async () => {
    const timeline = await bb(['frames', har, '--timeline', '--config', config]);
    assert.equal(timeline.code, 0, timeline.stderr);
    assert.match(timeline.stdout, /← grpc\s+\S+\s+\{name: "stored b", n: 2\}$/m);
    const page = await bb(['frames', har, '--html', '-', '--config', config]);
    assert.equal(page.code, 0, page.stderr);
    assert.ok(page.stdout.includes('{name: \\"stored b\\", n: 2}'), 'the row label names the fields');
    assert.ok(page.stdout.includes('name  string  \\"stored b\\"\\nn  number  2'), 'the payload panel names the fields');
  });

  it('refuses a config that does not exist, or whose .proto does not parse, with one line and exit 2', async () => {
    const missing = await bb(['frames', har, '--config', join(dir, 'nope.json')]);
    assert.equal(missing.code, 2);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /^bb: config \S+nope\.json cannot be read \(it does not exist\): check the --config path\.\n$/);
    writeFileSync(join(dir, 'protos/broken.proto'), 'syntax = "proto3";\nmessage Item { string name = ; }\n');
    const brokenConfig = join(dir, 'broken.config.json');
    writeFileSync(brokenConfig, JSON.stringify({ normalize: { proto: ['protos/broken.proto'] } }));
    const broken = await bb(['frames', har, '--config', brokenConfig]);
    assert.equal(broken.code, 2);
    assert.equal(broken.stdout, '');
    assert.match(broken.stderr, /^bb: config \S+ normalize\.proto\[0\]: \S+broken\.proto is not a \.proto file protobufjs can parse \(.*\): fix the file\.\n$/);
  });
});

describe('bb show --entry --body --config', () => {
  it('lists a gRPC call\'s messages with their fields named', async () => {
    const list = await bb(['show', har, '--json']);
    const entries = (JSON.parse(list.stdout) as { entries: Array<{ seq?: number; entry: number; url: string }> }).entries;
    const store = entries.find((e) => e.url.endsWith('/demo.Items/Store'))!;
    const out = await bb(['show', har, '--entry', `#${store.seq ?? store.entry}`, '--body', '--config', config]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /→ grpc\s+\S+\s+\{name: "b", n: 2\}$/m);
    assert.match(out.stdout, /← grpc\s+\S+\s+\{name: "stored b", n: 2\}$/m);
    const without = await bb(['show', har, '--entry', `#${store.seq ?? store.entry}`, '--config', config]);
    assert.equal(without.code, 2);
    assert.match(without.stderr, /^bb: --config names gRPC fields in the messages --body lists/);
  });
});
