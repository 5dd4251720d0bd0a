// A mirror target's HTTP/2 side (docs/shadow.md "What is mirrored, and when"): the
// primary's h2 and h2c exchanges, gRPC calls among them, go to the target's
// recording proxy over h2c (replay's H2Connection), one session per client
// connection of the primary, so the streams that shared a connection share
// one again and run as concurrently. The target proxy's exchange of each
// stream gets the shared id: its exchange-started fact names the session's
// connection (whose remotePort is the session's local port) and the stream
// id this side opened.
//
// A request whose body has not ended when the primary's response head
// arrives (a client-streaming or bidi gRPC call) goes with what arrived so
// far, then the rest as it crosses (the tee feeds `more`): as sent
// (Content-Length as sent; a gRPC call's messages one by one, each with the
// target's values: mirror-grpc.ts ClientMessages), and request trailers sent
// after that are not mirrored (gRPC clients send none).
// A whole request's body is the bound one (a gRPC call's messages framed
// again: mirror-grpc.ts).
import { PassThrough } from 'node:stream';
import { headerValue } from '../../core/index.js';
import { bodyBytes, H2Connection, h2Fields, type H2Request, type RequestParts } from '../replay/index.js';

/** The client side of one mirrored stream whose request is still arriving. */
export interface MirroredStream {
  /** Sends more request body bytes, as they crossed. */
  write(chunk: Buffer): void;
  /** The client ended its request. */
  end(): void;
  /** The client reset the stream, or the primary's exchange failed: cancel this one. */
  abort(): void;
}

/** One h2c session per client connection of the primary, and the shared id of each stream opened on it. */
export class H2Sessions {
  private readonly byConnection = new Map<string, Session>();

  /** `proxyUrl`: the target's recording proxy. */
  constructor(private readonly proxyUrl: string) {}

  /**
   * The session for a client connection (opened when first used), a recorder
   * of its stream ids, and `done`, to call once the stream's exchange is over
   * (a session the client closed meanwhile closes after its last stream).
   */
  session(connection: string): { conn: H2Connection; opened: (streamId: number, id: number) => void; done: () => void } {
    let s = this.byConnection.get(connection);
    if (!s) this.byConnection.set(connection, (s = { conn: new H2Connection(this.proxyUrl), ids: new Map(), streams: 0, closing: false }));
    const session = s;
    session.streams++;
    return {
      conn: session.conn,
      opened: (streamId, id) => session.ids.set(streamId, id),
      done: () => {
        if (--session.streams === 0 && session.closing) this.end(connection, session);
      },
    };
  }

  /** The shared id of a stream the target proxy saw on the connection from local `port`. */
  idAt(port: number, streamId: number): number | undefined {
    for (const s of this.byConnection.values()) if (s.conn.localPort === port) return s.ids.get(streamId);
    return undefined;
  }

  /**
   * The client connection closed: its session closes once its streams are
   * done. Until then its stream ids stay known (the target's proxy may see a
   * stream open after the client left: the mirror runs behind the primary).
   */
  close(connection: string): void {
    const s = this.byConnection.get(connection);
    if (!s) return;
    s.closing = true;
    if (s.streams === 0) this.end(connection, s);
  }

  /** Closes every session now. */
  closeAll(): void {
    for (const [c, s] of [...this.byConnection]) this.end(c, s);
  }

  private end(connection: string, s: Session): void {
    s.conn.close();
    if (this.byConnection.get(connection) === s) this.byConnection.delete(connection);
  }
}

/** One client connection's h2c session to the target's proxy. */
interface Session {
  conn: H2Connection;
  /** Stream id → shared id of the request it carries. */
  ids: Map<number, number>;
  /** Streams whose exchange is not over. */
  streams: number;
  /** The client connection closed: close once `streams` is 0. */
  closing: boolean;
}

/**
 * The h2 request a mirror sends for the primary's (`rawHeaders` as sent,
 * pseudo-headers first, and the body `sent` so far): `parts` (values bound,
 * --header applied) as h2 fields for the target's `authority`. A whole
 * request body is the bound one; one still arriving (`live`) goes as sent so
 * far, the rest through the returned stream's `more`.
 */
export function mirroredH2Request(rawHeaders: string[], sent: Buffer, parts: RequestParts, authority: string, live: boolean): { request: H2Request; more?: PassThrough } {
  const pseudo: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.startsWith(':')) pseudo.push(rawHeaders[i]!);
  const body = live ? sent : bodyBytes(parts);
  const recorded = (name: string) => headerValue(rawHeaders, name);
  const fields = h2Fields(pseudo, recorded, live ? { ...parts, trailers: undefined } : parts, authority, 'http', live ? undefined : body.length);
  if (!live) return { request: { ...fields, body } };
  const more = new PassThrough();
  return { request: { ...fields, body, more }, more };
}
