// gRPC fields by name in the live view (issue 38): the .proto files the
// config lists (normalize.proto, as `bb diff --config` reads them) name the
// fields of a real grpc-js call (127.0.0.1:0) recorded by `bb capture --ui
// --config` and by `bb shadow --ui --config`, in the opened exchange's field
// trees and the frames tab's rows, in headless Debian chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Page } from 'playwright-core';
import { CHROMIUM } from '../helpers/browser-app.js';
import { liveViewUrl, openGrpcMessages, openLiveView } from '../helpers/live-view.js';
import { startBb, type BbProcess } from '../helpers/cli.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { driveItems, itemsServer, writeItemsConfig } from '../helpers/grpc-items.js';

const cleanups = new Cleanups();
const dir = tempDir(cleanups).dir;
let config = '';
const env = { BB_HOME: join(dir, 'home') };
let port = 0;

before(async () => {
  if (!CHROMIUM) return;
  config = writeItemsConfig(dir);
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

/** Opens the exchange whose path is `path` in the Exchanges tab, on its messages; its decoded trees' rows. */
async function openMessages(p: Page, path: string, trees: number): Promise<string[][]> {
  await p.click('#tabs button[data-view="capture"]');
  return openGrpcMessages(p, path, trees);
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
