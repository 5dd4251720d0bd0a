// The flags of `bb capture` for forward mode and upstream TLS, resolved once into data.
//
//   --mode forward            bb as HTTP(S)_PROXY (absolute-form requests, CONNECT tunnels)
//   --hosts GLOB,...          intercept only these hosts; others are tunnelled and recorded as tunnels
//   --allow-remote            forward mode on a non-loopback address (an open relay otherwise refused)
//   --upstream-ca FILE        trust this CA for https upstreams, on top of Node's roots and NODE_EXTRA_CA_CERTS
//   --insecure-upstream       do not verify upstream certificates (explicit opt-out)
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { readExtraCaFile, type UpstreamTlsOptions } from '../proxy/index.js';
import { BbError } from '../core/index.js';
import type { BbEnvironment } from './environment.js';

/** Forward-mode settings from argv. */
export interface ForwardFlags {
  /** True with --mode forward. */
  forward: boolean;
  /** Host globs to intercept (empty = all). */
  hosts: string[];
  /** --allow-remote. */
  allowRemote: boolean;
}

/** Declares the forward-mode and upstream-TLS options on a yargs builder. */
export function withForwardOptions(y: Argv): Argv {
  const forward = y
    .option('mode', { choices: ['reverse', 'forward'], default: 'reverse', describe: 'reverse: in front of --target; forward: an HTTP(S) proxy for clients (HTTPS_PROXY)' })
    .option('hosts', { type: 'string', array: true, describe: 'forward: intercept only these host globs (comma-separated; others are tunnelled untouched)' })
    .option('allow-remote', { type: 'boolean', default: false, describe: 'forward: allow a non-loopback --listen (anyone reaching it can relay through bb)' });
  return withUpstreamTlsOptions(forward, 'upstreams');
}

/** Declares --upstream-ca and --insecure-upstream (read by upstreamTlsFrom); `what`: the https servers they are about. */
export function withUpstreamTlsOptions(y: Argv, what: string): Argv {
  return y
    .option('upstream-ca', { type: 'string', array: true, describe: `PEM CA file(s) to trust for https ${what}, added to the default roots` })
    .option('insecure-upstream', { type: 'boolean', default: false, describe: `do not verify the certificates of https ${what}` });
}

/** Reads --mode, --hosts and --allow-remote. */
export function forwardFlagsFrom(argv: Record<string, unknown>): ForwardFlags {
  const forward = argv['mode'] === 'forward';
  const hosts = ((argv['hosts'] as string[] | undefined) ?? []).flatMap((h) => String(h).split(',')).map((h) => h.trim()).filter(Boolean);
  for (const glob of hosts) {
    if (!/^[A-Za-z0-9*?._:[\]-]+$/.test(glob)) throw new BbError('BB_BAD_HOSTS', `--hosts takes host globs like *.example.com, got '${glob}'`);
  }
  if (!forward && hosts.length > 0) throw new BbError('BB_BAD_HOSTS', '--hosts only goes with --mode forward (a reverse proxy has one --target)');
  if (!forward && argv['allow-remote']) throw new BbError('BB_USAGE', '--allow-remote only goes with --mode forward');
  return { forward, hosts, allowRemote: Boolean(argv['allow-remote']) };
}

/**
 * Reads --upstream-ca and --insecure-upstream. The files extend Node's roots
 * and NODE_EXTRA_CA_CERTS (read once into the environment; proxy/upstream.ts adds them).
 */
export function upstreamTlsFrom(argv: Record<string, unknown>, environment: BbEnvironment): UpstreamTlsOptions {
  const files = ((argv['upstream-ca'] as string[] | undefined) ?? []).map(String);
  const insecure = Boolean(argv['insecure-upstream']);
  if (insecure && files.length > 0) {
    throw new BbError('BB_USAGE', '--upstream-ca and --insecure-upstream contradict each other: keep verification with --upstream-ca, or drop it');
  }
  if (insecure) return { insecure: true };
  if (files.length === 0) return {};
  return { extraCa: files.map((file) => readCaFile(file, '--upstream-ca')), nodeExtraCa: readExtraCaFile(environment.nodeExtraCaFile) };
}

function readCaFile(file: string, flag: string): string {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new BbError('BB_BAD_CA', `${flag} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): give a PEM certificate file`);
  }
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text);
  try {
    if (!first) throw new Error('no PEM block');
    new X509Certificate(first[0]);
  } catch {
    throw new BbError('BB_BAD_CA', `${flag} ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return text;
}

/** The --target the capture plan uses in forward mode: one proxy labelled "forward" (captures/forward.har). */
export const FORWARD_PLAN_TARGET = 'forward=http://forward.invalid';

/** Checks --target against --mode forward and gives planCaptures its arguments (listen default 127.0.0.1:8080). */
export function forwardPlanArgs(targets: string[], listens: string[]): { targets: string[]; listens: string[] } {
  if (targets.length > 0) {
    throw new BbError('BB_USAGE', '--mode forward takes no --target: each request names its own host (point clients at bb with HTTPS_PROXY)');
  }
  return { targets: [FORWARD_PLAN_TARGET], listens: listens.length > 0 ? listens : ['127.0.0.1:8080'] };
}
