// The live output of `bb capture`: one line per finished exchange (id,
// method, path, status, size, duration), and a running count on a TTY.
import { isVerifyFailure, UPSTREAM_VERIFY_HINT, type Fact, type FactListener, type RawHeaders } from '../proxy/index.js';
import { grpcMedia, grpcStatusName } from '../capture/index.js';
import { headerValue, visibleText } from '../core/index.js';

interface Pending {
  /** The exchange's `_bb.seq` when known (else the proxy's exchange id). */
  seq: number;
  method: string;
  target: string;
  start: number;
  status?: number;
  /** A gRPC response: the grpc-status of its head ('' when none: it comes in the trailers, unless trailers-only). */
  grpc?: string;
  bytes: number;
}

/** Formats a byte count for people. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Options of a live log. */
export interface LiveLogOptions {
  /** Label shown first when several proxies run. */
  label?: string;
  /** Where lines go. */
  write: (line: string) => void;
  /** Colour the status. */
  color: boolean;
  /** How a request target is shown (bb capture redacts secret query values here as in the HAR). */
  showTarget?: (target: string) => string;
  /** The capture's seq for a proxy exchange id, so the log says `#<seq>` as bb show and bb frames do. */
  seqOf?: (exchangeId: number) => number | undefined;
  /** Forward mode: show each request's full URL (scheme and host), not only its path. */
  forward?: boolean;
}


/**
 * The status a line shows: a gRPC call that failed as `grpc 5 NOT_FOUND` (its
 * HTTP status says 200 whatever happened), else the HTTP status.
 */
function shownStatus(p: Pending, trailers: RawHeaders): string {
  const raw = p.grpc === undefined ? undefined : headerValue(trailers, 'grpc-status') ?? p.grpc;
  const code = raw ? Number(raw.trim()) : NaN;
  if (!(Number.isInteger(code) && code > 0)) return String(p.status ?? '-');
  const name = grpcStatusName(code);
  return `grpc ${code}${name ? ` ${name}` : ''}`;
}

/** `https://api.test:443` → `https://api.test` (the default port is not written). */
function originOf(scheme: string, authority: string): string {
  const defaultPort = scheme === 'https' ? ':443' : ':80';
  return `${scheme}://${authority.endsWith(defaultPort) ? authority.slice(0, -defaultPort.length) : authority}`;
}

/** A fact listener that prints one line per finished exchange; state is dropped as each ends. */
export function liveLog(options: LiveLogOptions): FactListener & { finished: () => number } {
  const pending = new Map<number, Pending>();
  let finished = 0;
  const paint = (status: number | string, text: string): string => {
    if (!options.color) return text;
    const s = Number(status);
    const code = s >= 500 || Number.isNaN(s) ? 31 : s >= 400 ? 33 : s >= 300 ? 36 : 32;
    return `\x1b[${code}m${text}\x1b[0m`;
  };
  const line = (p: Pending, status: string, note = ''): void => {
    finished++;
    const ms = Math.round(performance.timeOrigin + performance.now() - p.start);
    const prefix = options.label ? `${options.label} ` : '';
    // A peer's control or bidi characters (an h2 :path may hold an ESC) are written as escapes: they never reach the terminal as such.
    const target = visibleText(options.showTarget ? options.showTarget(p.target) : p.target);
    const path = target.length > 80 ? target.slice(0, 77) + '...' : target;
    options.write(`${prefix}#${p.seq} ${p.method} ${path} ${paint(status, status)} ${formatBytes(p.bytes)} ${ms} ms${note}`);
  };
  const listener = (fact: Fact): void => {
    switch (fact.type) {
      case 'exchange-started': {
        // In forward mode a tunnelled request names only its path: the host is in Host (HTTP/2: :authority).
        const host = options.forward && fact.target.startsWith('/') ? headerValue(fact.rawHeaders, 'host') ?? headerValue(fact.rawHeaders, ':authority') : undefined;
        const target = host ? originOf(fact.scheme, host) + fact.target : fact.target;
        const seq = options.seqOf?.(fact.exchangeId) ?? fact.exchangeId;
        pending.set(fact.exchangeId, { seq, method: fact.method, target, start: fact.time, bytes: 0 });
        break;
      }
      case 'response-started': {
        const p = pending.get(fact.exchangeId);
        if (!p) break;
        p.status = fact.statusCode;
        // gRPC says how a call ended in grpc-status: a trailer, or a header of a trailers-only response.
        if (grpcMedia(headerValue(fact.rawHeaders, 'content-type'))) p.grpc = headerValue(fact.rawHeaders, 'grpc-status') ?? '';
        break;
      }
      case 'response-body': {
        const p = pending.get(fact.exchangeId);
        if (p) p.bytes += fact.chunk.length;
        break;
      }
      case 'upgrade-opened': {
        const p = pending.get(fact.exchangeId);
        if (p) p.status = fact.statusCode;
        break;
      }
      case 'upgrade-closed': {
        const p = pending.get(fact.exchangeId);
        if (p) line(p, String(p.status ?? 101), ' (websocket closed)');
        pending.delete(fact.exchangeId);
        break;
      }
      case 'exchange-completed': {
        const p = pending.get(fact.exchangeId);
        if (p && !(p.status === 101)) {
          line(p, shownStatus(p, fact.rawTrailers));
          pending.delete(fact.exchangeId);
        }
        break;
      }
      case 'exchange-failed': {
        const p = pending.get(fact.exchangeId);
        // The client got bb's own response, or (once the response had started) the server's status cut short.
        if (p && fact.response) p.bytes += fact.response.body.length;
        // An upstream certificate bb cannot verify: say which flags fix it.
        const fix = isVerifyFailure(fact.error.code) ? `: ${UPSTREAM_VERIFY_HINT}` : '';
        if (p) line(p, String(fact.response?.statusCode ?? p.status ?? 502), ` (bb: ${fact.error.code}${fix})`);
        pending.delete(fact.exchangeId);
        break;
      }
      case 'exchange-aborted': {
        const p = pending.get(fact.exchangeId);
        if (p) line(p, String(p.status ?? '-'), ` (aborted by ${fact.by})`);
        pending.delete(fact.exchangeId);
        break;
      }
      case 'streams-reset': {
        // One line for a burst of h2 streams reset before any response (a rapid-reset flood), as the HAR has one entry.
        const p: Pending = { seq: options.seqOf?.(fact.exchangeId) ?? fact.exchangeId, method: fact.method, target: fact.target, start: fact.time, bytes: 0 };
        line(p, '-', ` (${fact.count} h2 streams reset before a response)`);
        break;
      }
      case 'client-error': {
        const seq = options.seqOf?.(fact.exchangeId) ?? fact.exchangeId;
        // A forward-mode TLS handshake the client refused names the host it was for, and what to do.
        const target = fact.authority ? `${originOf('https', fact.authority)}/` : '(unparseable request)';
        const p: Pending = { seq, method: '-', target, start: fact.time, bytes: 0 };
        line(p, String(fact.response?.statusCode ?? '-'), ` (${fact.error.code}${fact.hint ? `: ${fact.hint}` : ''})`);
        break;
      }
      default:
        break;
    }
  };
  return Object.assign(listener, { finished: () => finished });
}
