// mitmdump (Debian's mitmproxy package) as one more configuration, when it is
// installed: a reverse proxy recording flows to a file, the peer the issue
// measures bb against. Never installed by the benchmark.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import net from 'node:net';
import { delimiter, join } from 'node:path';
import type { Helper } from './lib/child.js';

/** The mitmdump on PATH, or undefined. */
export function findMitmdump(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'mitmdump');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`mitmdump did not listen on ${port} within ${deadlineMs} ms`);
}

/** Starts `mitmdump --mode reverse:<upstream>` writing flows to `flowsPath`. */
export async function startMitmdump(upstreamPort: number, flowsPath: string): Promise<Helper> {
  const bin = findMitmdump();
  if (!bin) throw new Error('mitmdump is not installed');
  const port = await freePort();
  const child = spawn(bin, ['--mode', `reverse:http://127.0.0.1:${upstreamPort}`, '--listen-host', '127.0.0.1', '-p', String(port), '-q', '-w', flowsPath], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await waitForPort(port, 30_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    pid: child.pid!,
    port,
    process: child,
    ask: () => Promise.reject(new Error('mitmdump answers no asks')),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
