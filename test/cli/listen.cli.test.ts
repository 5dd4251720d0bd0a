// bb capture's start-up as a new user meets it (cli/listen.ts and the checks
// around it): listen addresses, --ui and --admin addresses, --out with several
// targets, a port in use. Real child processes, real sockets on 127.0.0.1.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runBb, startBb } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { freePort } from '../helpers/ports.js';
import { liveViewUrl } from '../helpers/live-view.js';
import { helloServer } from '../helpers/servers.js';

// Many captures starting at once on a fresh bb home: test/capture/redact.cli.test.ts.
describe("bb capture's start-up", () => {
  const dir = tempDir().dir;
  const env = { BB_HOME: join(dir, 'home') };
  const servers: Array<http.Server | net.Server> = [];
  after(() => {
    for (const s of servers) {
      if (s instanceof http.Server) s.closeAllConnections();
      s.close();
    }
  });

  async function upstream(): Promise<number> {
    const { server, port } = await helloServer();
    servers.push(server);
    return port;
  }

  /** A port something else already listens on. */
  async function busyPort(): Promise<number> {
    const s = net.createServer();
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return (s.address() as AddressInfo).port;
  }


  for (const form of ['bare', 'colon'] as const) {
    test(`--listen ${form === 'bare' ? 'PORT' : ':PORT'} listens on 127.0.0.1:PORT`, async () => {
      const target = await upstream();
      const port = await freePort();
      const out = join(dir, `listen-${form}.har`);
      const bb = startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--listen', form === 'bare' ? String(port) : `:${port}`, '--out', out], env);
      const url = (await bb.waitFor(/capture: (http:\/\/[^ ]+) ->/))[1];
      assert.equal(url, `http://127.0.0.1:${port}`);
      assert.equal(await (await fetch(`${url}/x`)).text(), 'hello from /x');
      bb.child.kill('SIGINT');
      assert.equal(await bb.exited, 0, bb.stderr());
    });
  }

  test('--ui ADDR serves the live view at that address; one other machines could reach is exit 2 and creates nothing', async () => {
    const target = await upstream();
    const port = await freePort();
    const out = join(dir, 'ui-addr.har');
    const bb = startBb(['capture', '--target', `http://127.0.0.1:${target}`, '--ui', `127.0.0.1:${port}`, '--out', out], env);
    assert.equal(await liveViewUrl(bb), `http://127.0.0.1:${port}/`);
    assert.match(await (await fetch(`http://127.0.0.1:${port}/`)).text(), /^<!doctype html>/);
    bb.child.kill('SIGINT');
    assert.equal(await bb.exited, 0, bb.stderr());

    const remote = join(dir, 'ui-remote.har');
    const refused = await runBb(['capture', '--target', `http://127.0.0.1:${target}`, '--ui', '0.0.0.0:0', '--out', remote], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /^bb: --ui must bind a loopback address like 127\.0\.0\.1:0; '0\.0\.0\.0' would show the captured traffic to other machines/);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.ok(!existsSync(remote));
  });

  test('several targets with --out NAME.har is exit 2 saying --out is a folder, and creates nothing', async () => {
    const out = join(dir, 'one.har');
    const { code, stderr } = await runBb(['capture', '--target', 'old=http://127.0.0.1:1', '--target', 'new=http://127.0.0.1:2', '--out', out], env);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^bb: with 2 targets --out is a folder .*got '.*one\.har'.*--out captures\//);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.ok(!existsSync(out), 'no folder named one.har');
  });

  test('--admin on a port in use is exit 2 and leaves no capture behind, so the retry starts', async () => {
    const target = await upstream();
    const admin = await busyPort();
    const folder = join(dir, 'admin-busy');
    const out = join(folder, 'x.har');
    const args = ['capture', '--target', `http://127.0.0.1:${target}`, '--out', out];
    const failed = await runBb([...args, '--admin', `127.0.0.1:${admin}`], env);
    assert.equal(failed.code, 2, failed.stderr);
    assert.match(failed.stderr, /cannot listen on --admin 127\.0\.0\.1:\d+: the port is in use/);
    assert.doesNotMatch(failed.stdout, /recording to/, 'nothing claims to record');
    assert.ok(!existsSync(folder), `nothing left behind: ${existsSync(folder) ? readdirSync(folder).join(', ') : ''}`);
    const retry = startBb([...args, '--admin', '127.0.0.1:0'], env);
    await retry.waitFor(/admin: http/);
    retry.child.kill('SIGINT');
    assert.equal(await retry.exited, 0, retry.stderr());
    assert.ok(existsSync(out));
  });

  test('a second --listen in use is exit 2 and the first target leaves no file either', async () => {
    const target = await upstream();
    const busy = await busyPort();
    const folder = join(dir, 'listen-busy');
    const failed = await runBb(
      ['capture', '--target', `old=http://127.0.0.1:${target}`, '--target', `new=http://127.0.0.1:${target}`, '--listen', '0', '--listen', String(busy), '--out', folder + '/'],
      env,
    );
    assert.equal(failed.code, 2, failed.stderr);
    assert.match(failed.stderr, /the port is in use/);
    assert.ok(!existsSync(folder), `nothing left behind: ${existsSync(folder) ? readdirSync(folder).join(', ') : ''}`);
  });
});
