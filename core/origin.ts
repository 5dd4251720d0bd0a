// The servers bb sends to are given as origins: scheme, host and port. A path
// after them would be silently dropped (bb forwards each request's own path),
// so a URL with one is refused, by every command that takes a server's URL.
import { BbError } from './errors.js';

/**
 * `value` as an http(s) origin URL; throws BB_BAD_TARGET naming `flag` (`--target`, `--candidate`) when it is not a
 * URL, not http(s), has no host, or has a path, query or fragment (RFC 6454 §4: an origin is scheme, host and port).
 */
export function parseOrigin(value: string, flag: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new BbError('BB_BAD_TARGET', `${flag} needs a URL like http://127.0.0.1:3000, got '${value}'`);
  }
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new BbError('BB_BAD_TARGET', `${flag} is an origin (scheme, host, port) like http://127.0.0.1:3000, without a path; got '${value}'`);
  }
  return url;
}
