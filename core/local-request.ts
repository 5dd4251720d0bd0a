// Which requests to bb's own loopback endpoints (the admin endpoint, the live
// web view) come from this machine's clients rather than from a web page.
//
// Binding 127.0.0.1 is not enough: a page in the user's browser can send
// requests there (a text/plain POST needs no CORS preflight), and through DNS
// rebinding (a name its author controls, answered with 127.0.0.1) the browser
// even lets it read the answers. Such a request carries the page's name in
// Host or the page's origin in Origin; curl, a test driver or a page bb serves
// itself carries a loopback Host and no foreign Origin. One rule, here, so
// every endpoint applies the same one.
import { isIP } from 'node:net';
import { isLoopbackHost } from './hosts.js';

/** Host and Origin as received, every copy of each (Node's `req.headersDistinct` fits). */
export interface RequestAuthority {
  /** Every Host header value. */
  host?: string[];
  /** Every Origin header value. */
  origin?: string[];
}

// uri-host [":" port] (RFC 9110 §7.2, RFC 3986 §3.2.2): an IPv6 literal in
// brackets, or a name or IPv4 address with no ':', '@' (userinfo), brackets,
// slashes or spaces.
const AUTHORITY = /^(?:\[([0-9a-f:.]+)\]|([^\s:@[\]/\\?#]+))(?::(\d+))?$/i;

/** The port of `host[:port]` (undefined when absent) if the host is loopback; undefined for any other host. */
function loopbackAuthority(text: string): { port: string | undefined } | undefined {
  const m = AUTHORITY.exec(text);
  if (!m) return undefined;
  const [, ipv6, name, port] = m;
  if (ipv6 !== undefined && isIP(ipv6) !== 6) return undefined;
  return isLoopbackHost(ipv6 ?? name!) ? { port } : undefined;
}

/** A header value as a reason shows it: quoted, cut short. */
const shown = (v: string): string => JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}…` : v);

/**
 * Why a request to a bb endpoint listening on loopback `port` is refused, or
 * undefined when it is this machine's own: exactly one Host naming 127.0.0.0/8,
 * [::1] or localhost (any case, a trailing dot) with `port` or no port; and no
 * Origin, or one `http://` origin of such a host with `port`. `Origin: null`
 * (sandboxed pages, file: URLs) is foreign. The reason is one line.
 */
export function foreignRequestReason(headers: RequestAuthority, port: number): string | undefined {
  const own = `127.0.0.1:${port}, localhost:${port} or [::1]:${port}`;
  const hosts = headers.host ?? [];
  if (hosts.length !== 1) return `refused: ${hosts.length === 0 ? 'no Host header' : 'more than one Host header'}; bb answers only requests to ${own}`;
  const host = loopbackAuthority(hosts[0]!);
  if (!host || (host.port !== undefined && host.port !== String(port))) {
    return `refused: Host ${shown(hosts[0]!)} is not this endpoint (a web page may be rebinding a name to 127.0.0.1); bb answers only requests to ${own}`;
  }
  const origins = headers.origin ?? [];
  if (origins.length === 0) return undefined;
  const origin = origins.length === 1 ? /^http:\/\/(.*)$/i.exec(origins[0]!) : null;
  const from = origin ? loopbackAuthority(origin[1]!) : undefined;
  // An origin leaves out the scheme's default port (80).
  if (!from || (from.port ?? '80') !== String(port)) {
    return `refused: Origin ${shown(origins.join(', '))} is a web page of another origin; bb answers only clients that send no Origin, or pages of http://127.0.0.1:${port}, http://localhost:${port} or http://[::1]:${port}`;
  }
  return undefined;
}
