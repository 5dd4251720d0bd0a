// Where an exchange goes, and the per-client-connection upstream agents that
// keep the client↔upstream mapping 1:1 (one upstream connection per client
// connection, reused for keep-alive, closed with it).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Socket } from 'node:net';

/** An upstream origin. */
export interface Upstream {
  /** "http://127.0.0.1:3000" — what capture records as the target. */
  origin: string;
  /** true for https / wss upstreams. */
  tls: boolean;
  hostname: string;
  port: number;
  /** SNI name for TLS upstreams (a host name, never an IP). */
  servername?: string;
}

/** How bb talks TLS to upstreams. */
export interface UpstreamTlsOptions {
  /** Extra CA certificates (PEM), added to Node's bundled roots, never replacing them. */
  extraCa?: string[];
  /** Skip certificate verification (explicit opt-out). */
  insecure?: boolean;
  /**
   * The PEM of NODE_EXTRA_CA_CERTS, read by the caller (the CLI, the package
   * entry point): Node adds it to its roots only while no `ca` is given, so
   * with extraCa bb must add it itself.
   */
  nodeExtraCa?: string[];
}

/**
 * The PEM text of a NODE_EXTRA_CA_CERTS file, when set and readable (Node
 * itself only warns about an unreadable one; so does bb, by leaving it out).
 * The caller reads the variable: proxy/ takes no environment.
 */
export function readExtraCaFile(file: string | undefined): string[] {
  if (!file) return [];
  try {
    return [readFileSync(file, 'utf8')];
  } catch {
    return [];
  }
}

/** Parses an origin URL ("http://127.0.0.1:3000") into an Upstream; throws TypeError when it is not one. */
export function parseUpstream(origin: string): Upstream {
  const url = new URL(origin);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${origin}`);
  const isTls = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : isTls ? 443 : 80;
  return {
    origin: `${url.protocol}//${url.host}`,
    tls: isTls,
    hostname,
    port,
    servername: isTls && !isIpAddress(hostname) ? hostname : undefined,
  };
}

function isIpAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

/**
 * One client connection's upstream agents: a keep-alive agent per origin with
 * a single socket, so pipelined and keep-alive requests reach the server on
 * one connection, as the client sent them.
 */
export class ConnectionAgents {
  private readonly agents = new Map<string, http.Agent>();
  private readonly caList: string[] | undefined;

  constructor(
    private readonly tlsOptions: UpstreamTlsOptions,
    /** Called when an idle upstream socket closes (the server ended keep-alive). */
    private readonly onUpstreamSocket: (socket: Socket) => void,
  ) {
    // Node's `ca:` replaces its whole store, NODE_EXTRA_CA_CERTS included: extra CAs add to both.
    this.caList = tlsOptions.extraCa?.length ? [...tls.rootCertificates, ...(tlsOptions.nodeExtraCa ?? []), ...tlsOptions.extraCa] : undefined;
  }

  /** The agent for an upstream, made on first use. */
  agentFor(upstream: Upstream): http.Agent {
    let agent = this.agents.get(upstream.origin);
    if (!agent) {
      const options = { keepAlive: true, maxSockets: 1, maxFreeSockets: 1, scheduling: 'fifo' as const };
      agent = upstream.tls
        ? new https.Agent({
            ...options,
            ca: this.caList,
            rejectUnauthorized: !this.tlsOptions.insecure,
            ALPNProtocols: ['http/1.1'],
          })
        : new http.Agent(options);
      const created = agent as http.Agent & { createConnection: (...args: unknown[]) => Socket };
      const original = created.createConnection.bind(agent);
      created.createConnection = (...args: unknown[]) => {
        const socket = original(...args);
        this.onUpstreamSocket(socket);
        return socket;
      };
      this.agents.set(upstream.origin, agent);
    }
    return agent;
  }

  /** Closes every upstream socket of this client connection. */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
