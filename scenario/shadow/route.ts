// The route a `bb shadow` run counts an exchange under: its method and path,
// with the segments that name one thing of many (numbers, ids, long tokens)
// as `{id}`, so `/items/7` and `/items/8` are one row. Findings keep the
// diff's own route names (diff/normalize); this one only groups counts.
import { PLACEHOLDER_SOURCE, type HarEntry } from '../../capture/index.js';

/** A path segment that is a redacted secret (a magic link's JWT), percent-encoded or not. */
const REDACTED_SEGMENT = new RegExp(`^${PLACEHOLDER_SOURCE}$`);

/** "GET /items/{id}" for an entry; WebSocket upgrades are "WS /path". */
export function routeOf(entry: HarEntry): string {
  const method = entry._resourceType === 'websocket' ? 'WS' : entry.request.method;
  return `${method} ${routePath(entry.request.url)}`;
}

/**
 * The path of a URL with id-like segments as `{id}`. The path as the diff reads it (a URL's pathname: `<` as
 * `%3C`, dot segments resolved), so a route's row and its findings name it alike (a raw `/<b>` was a row of its
 * own beside the `/%3Cb%3E` its findings named).
 */
export function routePath(url: string): string {
  let path: string;
  try {
    path = new URL(url, 'http://bb.invalid').pathname;
  } catch {
    path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/, 1)[0] || '/';
  }
  return path
    .split('/')
    .map((s) => (isIdLike(s) ? '{id}' : s))
    .join('/');
}

function isIdLike(segment: string): boolean {
  if (/^\d+$/.test(segment)) return true;
  // A secret in the path (a magic link's JWT), redacted: one per session, like an id.
  if (REDACTED_SEGMENT.test(segment.replace(/^%3C/i, '<').replace(/%3E$/i, '>'))) return true;
  // A token with digits among letters, long enough to be generated (uuid, hex, nanoid).
  return segment.length >= 8 && /\d/.test(segment) && /^[A-Za-z0-9_~.-]+$/.test(segment);
}
