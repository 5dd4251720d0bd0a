// Parsing of address and target flags, with sentences that say what to type.
import { BbError, parseOrigin } from '../core/index.js';

/** A host:port to listen on. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses "127.0.0.1:8080", "[::1]:8080", ":8080" or "8080" (host defaults to 127.0.0.1). */
export function parseListen(value: string, flag = '--listen'): ListenAddress {
  const text = String(value).trim();
  // A bare port ("8085") or ":8085" means 127.0.0.1; otherwise host:port, with the colon required.
  const m = /^:?(\d+)$/.exec(text) ? [text, undefined, undefined, text.replace(/^:/, '')] : /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(text);
  if (!m) throw new BbError('BB_BAD_LISTEN', `${flag} needs host:port like 127.0.0.1:8080 (or just a port), got '${text}'`);
  const host = m[1] || m[2] || '127.0.0.1';
  const port = Number(m[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new BbError('BB_BAD_LISTEN', `${flag} port must be 0-65535, got '${text}'`);
  }
  return { host, port };
}

/** A --target value: "old=http://127.0.0.1:3001" or just the URL. */
export interface TargetSpec {
  label?: string;
  url: string;
}

/** Parses one --target value; the URL must be http(s) with a host. */
export function parseTarget(value: string): TargetSpec {
  const text = String(value).trim();
  const eq = text.indexOf('=');
  const hasLabel = eq > 0 && !text.slice(0, eq).includes(':');
  const label = hasLabel ? text.slice(0, eq) : undefined;
  const url = hasLabel ? text.slice(eq + 1) : text;
  if (label !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(label)) {
    throw new BbError('BB_BAD_TARGET', `--target label '${label}' may hold only letters, digits, '.', '_' and '-' (it names the capture file)`);
  }
  const parsed = parseOrigin(url, '--target');
  return { label, url: `${parsed.protocol}//${parsed.host}` };
}
