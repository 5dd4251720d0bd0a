// One proxy configuration of the benchmark, in its own process so that its
// CPU and peak RSS are its alone. Usage (started by bench/proxy.ts):
//
//   node <proxy-peer compiled to JS> <kind> <upstream port> [work dir]   (see lib/compile.ts)
//
//   pipe       a raw TCP pipe (net): the limit for any proxy hop
//   forwarder  a bare http-proxy-3 forwarder (ws: true, keep-alive agent), no recording
//   tee        the forwarder plus a synchronous write of every body byte to a file: the floor for any recorder
//   bb-off     bb's proxy (startProxy) with no capture listening: recording off
//   bb         bb recording to a HAR in the work dir (startCapture): recording on
//
// Asks: 'stats' (bb: the capture's counts), 'close' (bb: finalizes the HAR, answers its size and time),
// 'profile-start' / 'profile-stop <file>' (any kind: a CPU profile of just the traffic in between,
// through node:inspector, written as a .cpuprofile).
import http from 'node:http';
import net from 'node:net';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { serveHelper } from './lib/serve.js';
import { profileAsk } from './lib/profile-asks.js';
// The built bb (npm run bench builds first): what `bb capture` runs.
import { startCapture, startProxy } from '../dist/index.js';

const [kind, portArg, workDir] = process.argv.slice(2);
const upstreamPort = Number(portArg);
const target = `http://127.0.0.1:${upstreamPort}`;

type Answer = (what: string) => unknown | Promise<unknown>;

async function pipe(): Promise<{ port: number; answer: Answer }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect({ port: upstreamPort, host: '127.0.0.1', noDelay: true });
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    answer: (what) => {
      if (what === 'close') {
        for (const s of sockets) s.destroy();
        server.close();
        return true;
      }
      return {};
    },
  };
}

async function forwarder(teeFile?: string): Promise<{ port: number; answer: Answer }> {
  const { createProxyServer } = await import('http-proxy-3');
  // tee: every body byte, both ways, written once with a synchronous write (as a recorder must, at least).
  const fd = teeFile ? openSync(teeFile, 'w') : undefined;
  const agent = new http.Agent({ keepAlive: true });
  const proxy = createProxyServer({ target, ws: true, agent });
  proxy.on('error', (_err: Error, _req: unknown, res: unknown) => {
    if (res instanceof http.ServerResponse) {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    } else if (res instanceof net.Socket) {
      res.destroy();
    }
  });
  if (fd !== undefined) {
    proxy.on('proxyReq', (_proxyReq: unknown, req: http.IncomingMessage) => req.on('data', (c: Buffer) => writeSync(fd, c)));
    proxy.on('proxyRes', (proxyRes: http.IncomingMessage) => proxyRes.on('data', (c: Buffer) => writeSync(fd, c)));
  }
  const server = http.createServer({ noDelay: true }, (req, res) => proxy.web(req, res));
  server.on('upgrade', (req, socket, head) => proxy.ws(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    answer: (what) => {
      if (what === 'close') {
        server.closeAllConnections();
        server.close();
        agent.destroy();
        if (fd !== undefined) closeSync(fd);
        return true;
      }
      return {};
    },
  };
}

async function bbOff(): Promise<{ port: number; answer: Answer }> {
  const proxy = await startProxy({ target });
  return {
    port: proxy.port,
    answer: async (what) => {
      if (what === 'close') {
        await proxy.close(0);
        return true;
      }
      return {};
    },
  };
}

async function bbRecording(): Promise<{ port: number; answer: Answer }> {
  if (!workDir) throw new Error('bb needs a work dir for its HAR');
  const out = join(workDir, 'bench.har');
  const capture = await startCapture({ target, out, bbHome: join(workDir, 'home'), label: 'bench' });
  return {
    port: capture.proxy.port,
    answer: async (what) => {
      if (what === 'stats') return capture.stats();
      if (what === 'close') {
        const started = performance.now();
        const stats = capture.stats();
        await capture.close(1_000);
        // maxRSS (KiB): the process's peak, finalize included; it exits right after answering.
        return { finalizeMs: performance.now() - started, harBytes: statSync(out).size, peakRss: process.resourceUsage().maxRSS / 1024, ...stats };
      }
      throw new Error(`unknown ask '${what}'`);
    },
  };
}

const kinds: Record<string, () => Promise<{ port: number; answer: Answer }>> = {
  pipe,
  forwarder: () => forwarder(),
  tee: () => {
    if (!workDir) throw new Error('tee needs a work dir for its file');
    mkdirSync(workDir, { recursive: true });
    return forwarder(join(workDir, 'tee.bin'));
  },
  'bb-off': bbOff,
  bb: bbRecording,
};
const start = kinds[kind ?? ''];
if (!start) {
  console.error(`proxy-peer: unknown kind '${kind}' (one of ${Object.keys(kinds).join(', ')})`);
  process.exit(2);
}
const { port, answer } = await start();
serveHelper(port, async (what) => {
  const profiled = profileAsk(what);
  if (profiled) return profiled;
  return answer(what);
});
