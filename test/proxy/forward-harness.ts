// Peers for forward-proxy tests: an HTTPS upstream with its own CA (trusted by
// bb through upstreamTls.extraCa, never by the client), a plain HTTP upstream,
// bb's CA in a temp home, and a fact recorder grouped by exchange.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { FactBus, type Fact } from '../../proxy/events.js';
import { Cleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/tmp.js';
import { createLeafFactory, loadOrCreateCa, type Ca } from '../../proxy/tls/index.js';

/** Answers every request with JSON describing it; /ws upgrades to an echoing WebSocket. */
function describeRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.stringify({
      method: req.method,
      url: req.url,
      rawHeaders: req.rawHeaders,
      body: Buffer.concat(chunks).toString(),
      tls: (req.socket as { encrypted?: boolean }).encrypted === true,
    });
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-Upstream': 'yes' });
    res.end(body);
  });
}

function attachEcho(server: http.Server): WebSocketServer {
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(isBinary ? data : `echo:${data.toString()}`)));
  return wss;
}

/** Everything a forward test needs; `close()` undoes it all. */
export interface ForwardPeers {
  /** Temp folder (bb's home is `home`). */
  dir: string;
  /** bb's home. */
  home: string;
  /** bb's CA. */
  ca: Ca;
  /** bb's CA certificate file (for curl --cacert). */
  caFile: string;
  /** The upstream's own CA certificate, PEM (what --upstream-ca would add). */
  upstreamCaPem: string;
  /** The upstream's own CA file. */
  upstreamCaFile: string;
  /** HTTPS upstream port on 127.0.0.1 (certificate for localhost and 127.0.0.1). */
  httpsPort: number;
  /** Plain HTTP upstream port on 127.0.0.1. */
  httpPort: number;
  close(): Promise<void>;
}

/** Starts the upstreams and makes both CAs. */
export async function startPeers(): Promise<ForwardPeers> {
  const owned = new Cleanups();
  const { dir } = tempDir(owned);
  const home = join(dir, 'home');
  const ca = await loadOrCreateCa(home);
  // The upstream's own CA lives apart: the client never trusts it.
  const upstreamCa = await loadOrCreateCa(join(dir, 'upstream-ca'));
  const upstreamLeaves = createLeafFactory(upstreamCa);
  const byName = { localhost: await upstreamLeaves.pemFor('localhost'), ip: await upstreamLeaves.pemFor('127.0.0.1') };
  const httpsServer = https.createServer(
    {
      key: byName.ip.keyPem,
      cert: byName.ip.chainPem,
      SNICallback: (name, done) => upstreamLeaves.contextFor(name).then((ctx) => done(null, ctx), done),
    },
    describeRequest,
  );
  const httpServer = http.createServer(describeRequest);
  const wssList = [attachEcho(httpsServer), attachEcho(httpServer)];
  await new Promise<void>((r) => httpsServer.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  const upstreamCaFile = join(dir, 'upstream-ca.pem');
  await writeFile(upstreamCaFile, upstreamCa.certPem);
  return {
    dir,
    home,
    ca,
    caFile: ca.certPath,
    upstreamCaPem: upstreamCa.certPem,
    upstreamCaFile,
    httpsPort: (httpsServer.address() as AddressInfo).port,
    httpPort: (httpServer.address() as AddressInfo).port,
    close: async () => {
      for (const wss of wssList) {
        for (const client of wss.clients) client.terminate();
        wss.close();
      }
      httpsServer.closeAllConnections();
      httpServer.closeAllConnections();
      await new Promise((r) => httpsServer.close(r));
      await new Promise((r) => httpServer.close(r));
      await owned.run();
    },
  };
}

/** Collects facts from a bus; groups them per exchange. */
export class FactLog {
  /** Every fact, in order. */
  readonly facts: Fact[] = [];
  constructor(bus: FactBus) {
    bus.on((fact) => this.facts.push(fact));
  }
  /** How many facts there are so far: a mark that since() and waitFor() can start from. */
  mark(): number {
    return this.facts.length;
  }
  /** The facts after a mark: what one test caused, whatever other tests did before it. */
  since(mark: number): Fact[] {
    return this.facts.slice(mark);
  }
  /** The facts of one exchange. */
  of(exchangeId: number): Fact[] {
    return this.facts.filter((f) => 'exchangeId' in f && f.exchangeId === exchangeId);
  }
  /** exchange-started facts matching a predicate. */
  started(where: (f: Extract<Fact, { type: 'exchange-started' }>) => boolean = () => true): Array<Extract<Fact, { type: 'exchange-started' }>> {
    return this.facts.filter((f): f is Extract<Fact, { type: 'exchange-started' }> => f.type === 'exchange-started' && where(f));
  }
  /** Waits (bounded) until a fact matching the predicate exists (after the mark `from`, when given). */
  async waitFor(what: string, predicate: (f: Fact) => boolean, timeoutMs = 5_000, from = 0): Promise<Fact> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = this.facts.find((f, i) => i >= from && predicate(f));
      if (found) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no ${what} fact within ${timeoutMs} ms; saw ${this.facts.map((f) => f.type).join(', ')}`);
  }
}

/** The value of a header in a flat raw list (first match, case-insensitive). */
export function header(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name.toLowerCase()) return raw[i + 1];
  return undefined;
}

/** Runs curl; resolves with its exit code and output (never rejects). */
export function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['--silent', '--show-error', '--max-time', '20', '--noproxy', '', ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
