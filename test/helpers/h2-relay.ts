// A plain TCP relay on 127.0.0.1 port 0 that copies both directions' bytes
// unchanged and feeds a copy to an H2Session per connection, as the h2 tap
// will; and a fold of the session's facts into one record per stream, to
// compare with what real h2 peers report.
import net from 'node:net';
import { once } from 'node:events';
import { H2Session, type H2Fact } from '../../proxy/h2/session.js';

/** One relayed connection: its facts in arrival order. */
export interface RelayedConnection {
  /** Every fact the session reported. */
  facts: H2Fact[];
  /** Resolves when both sockets have closed. */
  closed: Promise<void>;
}

/** The relay and what it saw. */
export interface H2Relay {
  /** Its port on 127.0.0.1. */
  port: number;
  /** One entry per accepted connection, in order. */
  connections: RelayedConnection[];
  /** Stops listening and destroys open sockets. */
  close(): Promise<void>;
}

/** Starts a relay to 127.0.0.1:upstreamPort. */
export async function startH2Relay(upstreamPort: number): Promise<H2Relay> {
  const connections: RelayedConnection[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    const facts: H2Fact[] = [];
    const session = new H2Session({}, (fact) => facts.push(fact));
    // Not once(): it rejects on the 'error' a reset socket emits first.
    const closedOne = (s: net.Socket) => new Promise<void>((resolve) => s.on('close', () => resolve()));
    const closed = Promise.all([closedOne(client), closedOne(upstream)]).then(() => undefined);
    connections.push({ facts, closed });
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(from);
      from.on('error', () => {});
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
      from.on('end', () => to.end());
      from.on('data', (chunk: Buffer) => {
        to.write(chunk);
        if (from === client) session.fromClient(chunk, Date.now());
        else session.fromServer(chunk, Date.now());
      });
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** What the facts say about one stream. */
export interface SeenStream {
  /** The request's fields (a push's promised request too). */
  request?: Array<[string, string]>;
  /** Names of request fields sent never-indexed. */
  requestNeverIndexed: string[];
  /** The request's DATA, joined. */
  requestBody: Buffer;
  /** The client's trailing HEADERS. */
  requestTrailers?: Array<[string, string]>;
  /** Each 1xx head. */
  informational: Array<Array<[string, string]>>;
  /** The final response head. */
  response?: Array<[string, string]>;
  /** The response's DATA, joined. */
  responseBody: Buffer;
  /** The server's trailing HEADERS. */
  responseTrailers?: Array<[string, string]>;
  /** END_STREAM from the client. */
  clientEnded: boolean;
  /** END_STREAM from the server. */
  serverEnded: boolean;
  /** RST_STREAM, by the side that sent it. */
  reset?: { from: string; error: string };
  /** The stream a PUSH_PROMISE for this one came on. */
  pushedOn?: number;
}

/** Folds one connection's facts into streams by id. */
export function streamsOf(facts: H2Fact[]): Map<number, SeenStream> {
  const streams = new Map<number, SeenStream>();
  const chunks = new Map<string, Buffer[]>();
  const get = (id: number): SeenStream => {
    let s = streams.get(id);
    if (!s) {
      s = { requestNeverIndexed: [], requestBody: Buffer.alloc(0), informational: [], responseBody: Buffer.alloc(0), clientEnded: false, serverEnded: false };
      streams.set(id, s);
    }
    return s;
  };
  for (const f of facts) {
    if (f.type === 'headers') {
      const s = get(f.streamId);
      if (f.kind === 'request') {
        s.request = f.headers;
        s.requestNeverIndexed = f.neverIndexed.map((i) => f.headers[i]![0]);
      } else if (f.kind === 'informational') s.informational.push(f.headers);
      else if (f.kind === 'response') s.response = f.headers;
      else if (f.from === 'client') s.requestTrailers = f.headers;
      else s.responseTrailers = f.headers;
      if (f.endStream) s[f.from === 'client' ? 'clientEnded' : 'serverEnded'] = true;
    } else if (f.type === 'data') {
      const key = `${f.streamId}/${f.from}`;
      chunks.set(key, [...(chunks.get(key) ?? []), f.data]);
      if (f.endStream) get(f.streamId)[f.from === 'client' ? 'clientEnded' : 'serverEnded'] = true;
    } else if (f.type === 'push') {
      const s = get(f.promisedStreamId);
      s.request = f.headers;
      s.pushedOn = f.streamId;
      s.clientEnded = true;
    } else if (f.type === 'reset') {
      get(f.streamId).reset = { from: f.from, error: f.error };
    }
  }
  for (const [key, list] of chunks) {
    const [id, from] = key.split('/');
    get(Number(id))[from === 'client' ? 'requestBody' : 'responseBody'] = Buffer.concat(list);
  }
  return streams;
}
