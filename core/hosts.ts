// Host names and addresses: which ones only this machine can reach.
import { BlockList, isIP } from 'node:net';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * True for `localhost`, 127.0.0.0/8, ::1 and IPv4-mapped loopback
 * (`::ffff:127.0.0.2`), with or without the brackets of a URL's IPv6 host.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().replace(/^\[(.*)\]$/, '$1').toLowerCase().replace(/\.$/, '');
  if (h === 'localhost') return true;
  const family = isIP(h);
  return family !== 0 && loopback.check(h, family === 6 ? 'ipv6' : 'ipv4');
}

const isWildcard = (host: string): boolean => host === '0.0.0.0' || host === '::' || host === '[::]';

/**
 * True when `host`:`port` reaches the listener at `own`: the same host and port,
 * or a loopback (or wildcard) name while `own` listens on loopback or on every
 * interface. A proxy sending there would feed itself.
 */
export function namesOwnAddress(host: string, port: number, own: { host: string; port: number }): boolean {
  if (port !== own.port) return false;
  const h = host.replace(/^\[(.*)\]$/, '$1');
  if (h === own.host) return true;
  return (isLoopbackHost(h) || isWildcard(h)) && (isLoopbackHost(own.host) || isWildcard(own.host));
}
