// The only request bytes bb writes itself: a head rebuilt when a flag asks
// (--change-origin, --xfwd) or forward mode needs origin-form. Otherwise the
// head goes upstream exactly as the client sent it (docs/capture.md "What
// the proxy guarantees": transparent). A reverse proxy keeps an absolute-form
// request line too: a server must accept that form (RFC 9112 §3.2.2), and
// what it does with it is part of what is being recorded.
import type { RequestHead } from './http1/head.js';
import type { Upstream } from './upstream.js';
import { serializeHead } from '../core/index.js';

/** What a rewrite may need besides the head. */
export interface RewriteSettings {
  /** Add X-Forwarded-For/-Proto/-Host. */
  xfwd: boolean;
  /** Rewrite Host to the upstream's host. */
  changeOrigin: boolean;
  /** Send request-targets in origin-form (forward mode: the client's absolute-form names the upstream, a server expects a path). */
  originForm: boolean;
}

/** A request-target in origin-form, even when the client used absolute-form. */
function toOriginForm(target: string): string {
  if (target.startsWith('/') || target === '*') return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return target;
  }
}

/**
 * The head bytes to send upstream: `head.raw` itself unless a flag or the
 * target form needs a change, then the head rebuilt from its raw headers
 * (names, order and duplicates kept).
 */
export function outgoingHead(head: RequestHead, upstream: Upstream, settings: RewriteSettings, scheme: string, remoteAddress: string): Buffer {
  const target = settings.originForm ? toOriginForm(head.target) : head.target;
  if (!settings.changeOrigin && !settings.xfwd && target === head.target) return head.raw;
  const raw = head.rawHeaders.slice();
  let host = '';
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'host') continue;
    host = raw[i + 1]!;
    if (settings.changeOrigin) raw[i + 1] = upstream.origin.replace(/^https?:\/\//, '');
  }
  if (settings.xfwd) raw.push('X-Forwarded-For', remoteAddress, 'X-Forwarded-Proto', scheme, 'X-Forwarded-Host', host);
  return Buffer.from(serializeHead(`${head.method} ${target} HTTP/${head.httpVersion}`, raw), 'latin1');
}
