// What names an entry for pairing: the host it went to, its route with or
// without that host, and its key (page and route). Whether keys name hosts
// is decided for both captures at once (hostsInKeys).
import type { HarEntry } from '../../capture/index.js';
import type { NormalizeContext } from './context.js';
import { normalizeString } from './walk.js';
import { unnumber } from './ordinals.js';

/** The host an entry went to, normalized ("a.test", "127.0.0.1:<PORT>" under loopback-port), markers unnumbered; "" when the URL has none. */
export function entryHost(e: HarEntry, ctx: Pick<NormalizeContext, 'hostWalk' | 'table'>): string {
  let host = '';
  try {
    host = new URL(e.request.url).host.toLowerCase();
  } catch {
    const h = e.request.headers.find((x) => x.name.toLowerCase() === 'host' || x.name === ':authority');
    host = h ? h.value.toLowerCase() : '';
  }
  return host && unnumber(normalizeString(host, ctx.hostWalk), ctx.table);
}

/** The pairing key of an entry: its page and its route. */
export function entryKey(page: string, route: string): string {
  return `${page}\n${route}`;
}

/** A route naming its host as a network-path reference (RFC 3986 §4.2): `GET /x` → `GET //a.test/x`; no host, no change. */
export function routeWithHost(route: string, host: string): string {
  return host ? route.replace(/^(\S+) /, `$1 //${host}`) : route;
}

/** A route without its host: `GET //a.test/x` → `GET /x`. */
export function routeWithoutHost(route: string): string {
  return route.replace(/^(\S+) \/\/[^/]*/, '$1 ');
}

/** The distinct normalized hosts of a capture's entries. */
export function hostsOf(entries: readonly HarEntry[], ctx: Pick<NormalizeContext, 'hostWalk' | 'table'>): Set<string> {
  const out = new Set<string>();
  for (const e of entries) out.add(entryHost(e, ctx));
  return out;
}

/**
 * Whether entry keys include the host, decided for a pair of captures: yes
 * when either has more than one host (forward mode, a browser's HAR), so
 * `https://a.test/` and `https://b.test/` do not pair; no for captures of one
 * host each (a reverse proxy), so old and new on different hosts or ports
 * still pair.
 */
export function hostsInKeys(oldHosts: ReadonlySet<string>, newHosts: ReadonlySet<string>): boolean {
  return oldHosts.size > 1 || newHosts.size > 1;
}
