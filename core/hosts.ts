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
