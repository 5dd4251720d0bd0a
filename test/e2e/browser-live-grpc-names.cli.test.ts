// gRPC fields by name in the live view (issue 38): the .proto files the
// config lists (normalize.proto, as `bb diff --config` reads them) name the
// fields of a real grpc-js call (127.0.0.1:0) recorded by `bb capture --ui
// --config` and by `bb shadow --ui --config`, in the opened exchange's field
// trees and the frames tab's rows, in headless Debian chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openLiveView } from '../helpers/live-view.js';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { driveItems, itemsServer } from '../helpers/grpc-items.js';

const ITEMS_PROTO = `syntax = "proto3";
package demo;
message Item { string name = 1; int32 n = 2; }
service Items {
  rpc Lookup (Item) returns (Item);
  rpc Store (Item) returns (Item);
}
`;

const cleanups = new Cleanups();
const dir = tempDir(cleanups).dir;
const config = join(dir, 'bb.config.json');
const env = { BB_HOME: join(dir, 'home') };
let port = 0;

before(async () => {
  if (!CHROMIUM) return;
  mkdirSync(join(dir, 'protos'));
  writeFileSync(join(dir, 'protos/items.proto'), ITEMS_PROTO);
  writeFileSync(config, JSON.stringify({ normalize: { proto: ['protos/items.proto'] } }));
  port = await itemsServer(cleanups, { lookupStatus: grpc.status.NOT_FOUND });
});

after(() => cleanups.run());

/** Starts bb with `args`, waits for its proxy's address (`proxyLine`'s first group) and opens its live view. */
async function startLive(args: string[], proxyLine: RegExp): Promise<{ page: Page; proxy: string; complaints: string[] }> {
  const bb: BbProcess = startBb(args, env, { timeoutMs: 120_000 });
  cleanups.add(async () => {
    if (bb.child.exitCode === null) bb.child.kill('SIGINT');
    await bb.exited;
  });
  const proxy = (await bb.waitFor(proxyLine, 30_000))[1]!;
  const { browser, page, complaints } = await openLiveView(await liveViewUrl(bb), { width: 1280, height: 900 });
  cleanups.add(() => browser.close());
  return { page, proxy, complaints };
}

/** Opens the exchange whose path is `path` in the capture view, on its messages tab; its decoded trees' rows as "name type value". */
async function openMessages(p: Page, path: string, trees: number): Promise<string[][]> {
  await p.click('#tabs button[data-view="capture"]');
  await p.waitForFunction((q) => [...document.querySelectorAll('.list .row .c-path')].some((c) => c.textContent === q), path);
  await p.evaluate((q) => [...document.querySelectorAll<HTMLElement>('.list .row .c-path')].find((c) => c.textContent === q)!.click(), path);
  await p.waitForSelector('.detail .dtabs button[data-tab="messages"]');
  await p.click('.detail .dtabs button[data-tab="messages"]');
  await p.waitForFunction((n) => document.querySelectorAll('.detail .messages .proto').length === n, trees);
  return p.$$eval('.detail .messages .proto', (boxes) =>
    boxes.map((box) => [...box.querySelectorAll('.pf')].map((r) => [...r.children].map((c) => c.textContent).join(' '))),
  );
}

/** The frames tab's gRPC rows' payload text, once `count` are there. */
async function grpcFrames(p: Page, count: number): Promise<string[]> {
  await p.click('#tabs button[data-view="frames"]');
  await p.waitForFunction(
    (n) => [...document.querySelectorAll('[data-view="frames"] .row.frame')].filter((r) => r.querySelector('.c-op')?.textContent === 'grpc').length >= n,
    count,
  );
  return p.$$eval('[data-view="frames"] .row.frame', (all) =>
    all.filter((r) => r.querySelector('.c-op')?.textContent === 'grpc').map((r) => r.querySelector('.c-data')!.textContent!),
  );
}

test('bb capture --ui --config names a gRPC call\'s fields in the opened exchange and the frames tab', async (t) => {
  if (!CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const { page, proxy, complaints } = await startLive(
    ['capture', '--target', `http://127.0.0.1:${port}`, '--ui', '--config', config, '--out', join(dir, 'capture.har')],
    /bb: capture: http:\/\/127\.0\.0\.1:(\d+) ->/,
  );
  assert.equal(await driveItems(Number(proxy)), grpc.status.NOT_FOUND);
  assert.deepEqual(await openMessages(page, '/demo.Items/Store', 2), [['name string b', 'n number 2'], ['name string stored b', 'n number 2']]);
  const frames = await grpcFrames(page, 3);
  assert.ok(frames.includes('{name: "stored b", n: 2}'), frames.join('\n'));
  assert.ok(frames.includes('{name: "a", n: 1}'), frames.join('\n'));
  assert.deepEqual(complaints, []);
});

test('bb shadow --ui --config names them in the primary\'s capture tab', async (t) => {
  if (!CHROMIUM) return t.skip('Debian chromium is not installed (apt-get install chromium)');
  const second = await itemsServer(cleanups, { lookupStatus: grpc.status.NOT_FOUND });
  const { page, proxy, complaints } = await startLive(
    ['shadow', '--primary', `http://127.0.0.1:${port}`, '--candidate', `http://127.0.0.1:${second}`, '--ui', '--config', config, '--out', join(dir, 'shadow')],
    /clients → http:\/\/127\.0\.0\.1:(\d+)/,
  );
  assert.equal(await driveItems(Number(proxy)), grpc.status.NOT_FOUND);
  assert.deepEqual(await openMessages(page, '/demo.Items/Store', 2), [['name string b', 'n number 2'], ['name string stored b', 'n number 2']]);
  const frames = await grpcFrames(page, 3);
  assert.ok(frames.includes('{name: "stored b", n: 2}'), frames.join('\n'));
  assert.deepEqual(complaints, []);
});
