// The bundled demo service, in two variants: `--variant old` and `--variant new`.
//
// It does on the wire what real services do: REST resources with error
// envelopes, a WebSocket with a hello, subscriptions from a cursor with replay
// and resync, an SSE stream for a long operation, and a zip export. Ids,
// timestamps, ports and its HOME appear in bodies, so bb's normalization has
// work to do.
//
// The one ratified difference: the old variant's 40401 envelope (unknown
// session) carries a `stack` field that leaks server paths; the new one drops
// it. Two switches exist for bb's own tests: `--drift` adds an unregistered
// field to sessions, `--crash-on-export` makes the process die mid-scenario,
// `--jitter` puts a random number in /v1/meta (noise no rule knows).
//
// Prints `READY {"port":N}` once listening on 127.0.0.1:0; stops on SIGTERM.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomInt, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { SessionStore, ulid, type Session, type SessionEvent } from './sessions.js';
import { writeZip } from './zip.js';

const { values: flags } = parseArgs({
  options: {
    variant: { type: 'string', default: 'new' },
    drift: { type: 'boolean', default: false },
    'crash-on-export': { type: 'boolean', default: false },
    jitter: { type: 'boolean', default: false },
  },
});
const variant = flags.variant === 'old' ? 'old' : 'new';
const home = process.env.HOME ?? '/nonexistent';
const startedAt = new Date().toISOString();
const store = new SessionStore(home);
let port = 0;

/** A failure the API reports as an envelope. */
class ApiError extends Error {
  constructor(readonly status: number, readonly code: number, message: string, readonly extra: Record<string, unknown> = {}) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'x-request-id': randomUUID() });
  res.end(text);
}

function view(session: Session): Record<string, unknown> {
  return flags.drift ? { ...session, pinned: false } : { ...session };
}

/** Finds a session or throws the envelope a client gets: 40401 unknown, 40410 archived. */
function resolveSession(id: string, allowArchived = false): Session {
  const session = store.get(id);
  if (!session) {
    const err = new ApiError(404, 40401, 'unknown session', { session_id: id });
    // The old variant leaks its stack (absolute server paths); the new one does not.
    if (variant === 'old') err.extra.stack = err.stack;
    throw err;
  }
  if (session.archived && !allowArchived) throw new ApiError(410, 40410, 'session archived', { session_id: id });
  return session;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new ApiError(400, 40001, 'body is not JSON');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POST /v1/sessions/:id/prompts: a long operation streamed as SSE, mirrored as session events. */
async function prompt(res: ServerResponse, session: Session, text: string): Promise<void> {
  const promptId = `msg_${ulid()}`;
  const t0 = Date.now();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': randomUUID() });
  let id = 0;
  const emit = (event: string, data: Record<string, unknown>) => {
    res.write(`event: ${event}\nid: ${++id}\ndata: ${JSON.stringify(data)}\n\n`);
    store.append(session.id, event, data);
  };
  emit('prompt.started', { prompt_id: promptId, text, started_at: new Date().toISOString() });
  for (const piece of ['Black', 'box ', 'reply']) {
    await sleep(5);
    emit('prompt.delta', { prompt_id: promptId, text: piece });
  }
  emit('prompt.usage', { prompt_id: promptId, prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
  emit('prompt.completed', { prompt_id: promptId, finished_at: new Date().toISOString(), durationMs: Date.now() - t0 });
  res.end();
}

function exportZip(res: ServerResponse, session: Session): void {
  const events = store.eventsAfter(session.id, 0);
  const transcript = [
    `# ${session.title}`,
    '',
    `Exported ${new Date().toISOString()} from ${session.workdir}.`,
    '',
    ...events.filter((e) => e.type === 'prompt.delta').map((e) => `- ${e.at} ${String(e.data.text)}`),
    '',
  ].join('\n');
  const zip = writeZip(
    [
      { name: 'session.json', data: Buffer.from(JSON.stringify(view(session), null, 2)) },
      { name: 'events.jsonl', data: Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n') },
      { name: 'transcript.md', data: Buffer.from(transcript) },
    ],
    new Date(),
  );
  res.writeHead(200, {
    'content-type': 'application/zip',
    'content-length': zip.length,
    'content-disposition': `attachment; filename="${session.id}.zip"`,
  });
  res.end(zip);
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://demo.invalid');
  const method = req.method ?? 'GET';
  const path = url.pathname;
  let m: RegExpExecArray | null;
  if (method === 'GET' && path === '/v1/meta') {
    const meta = { name: 'bb-demo', protocol_version: 2, started_at: startedAt, home, listen: `127.0.0.1:${port}`, ws_path: '/v1/ws' };
    return send(res, 200, flags.jitter ? { ...meta, nonce: randomInt(1e9) } : meta);
  }
  if (method === 'GET' && path === '/v1/connections') {
    // Only open ones: a socket whose close handshake began is on its way out.
    const open = [...connections.values()].filter((c) => c.socket.readyState === c.socket.OPEN);
    return send(res, 200, { items: open.map((c) => ({ id: c.id, connected_at: c.connectedAt, remote: c.remote, subscriptions: [...c.subscriptions] })) });
  }
  if (path === '/v1/sessions') {
    if (method === 'POST') {
      const body = await readJson(req);
      if (typeof body.title !== 'string' || !body.title) throw new ApiError(422, 42201, 'title is required');
      return send(res, 201, view(store.create(body.title)));
    }
    if (method === 'GET') {
      const archived = url.searchParams.get('archived') === 'true';
      return send(res, 200, { items: store.list(archived).map(view), next_cursor: null });
    }
  }
  if ((m = /^\/v1\/sessions\/([^/]+)$/.exec(path))) {
    if (method === 'GET') return send(res, 200, view(resolveSession(m[1]!)));
    if (method === 'PATCH') {
      const session = resolveSession(m[1]!);
      const body = await readJson(req);
      if (typeof body.title !== 'string' || !body.title) throw new ApiError(422, 42201, 'title is required');
      return send(res, 200, view(store.update(session.id, 'session.renamed', { title: body.title }, { from: session.title, to: body.title })));
    }
  }
  if ((m = /^\/v1\/sessions\/([^/]+)\/(fork|archive|restore|prompts|export|transcript)$/.exec(path))) {
    const [, id, action] = m as unknown as [string, string, string];
    if (method === 'POST' && action === 'fork') {
      const parent = resolveSession(id);
      const child = store.create(`${parent.title} (fork)`, parent.id);
      store.append(parent.id, 'session.fork_created', { child_id: child.id });
      return send(res, 201, view(child));
    }
    if (method === 'POST' && action === 'archive') {
      const session = resolveSession(id);
      return send(res, 200, view(store.update(session.id, 'session.archived', { archived: true })));
    }
    if (method === 'POST' && action === 'restore') {
      const session = resolveSession(id, true);
      return send(res, 200, view(store.update(session.id, 'session.restored', { archived: false })));
    }
    if (method === 'POST' && action === 'prompts') {
      const session = resolveSession(id);
      const body = await readJson(req);
      return prompt(res, session, String(body.text ?? ''));
    }
    if (method === 'GET' && action === 'transcript') {
      const session = resolveSession(id);
      return send(res, 200, { session_id: session.id, items: store.eventsAfter(session.id, 0).filter((e) => e.type.startsWith('prompt.')) });
    }
    if (method === 'GET' && action === 'export') {
      if (flags['crash-on-export']) {
        process.stderr.write('demo: crashing on export, as asked (--crash-on-export)\n');
        process.exit(70);
      }
      return exportZip(res, resolveSession(id, true));
    }
  }
  throw new ApiError(404, 40400, `no route for ${method} ${path}`);
}

const server = createServer((req, res) => {
  route(req, res).catch((err: unknown) => {
    if (err instanceof ApiError) {
      send(res, err.status, { error: { code: err.code, msg: err.message, request_id: randomUUID(), ...err.extra } });
      return;
    }
    send(res, 500, { error: { code: 50000, msg: 'internal error' } });
  });
});

/** A live WebSocket connection and what it subscribed to. */
interface Connection {
  id: string;
  connectedAt: string;
  remote: string;
  socket: WebSocket;
  subscriptions: Set<string>;
}
const connections = new Map<string, Connection>();

function push(conn: Connection, event: SessionEvent): void {
  conn.socket.send(JSON.stringify({ type: 'event', session_id: event.session_id, seq: event.seq, payload: event }));
}

store.listener = (event) => {
  for (const conn of connections.values()) if (conn.subscriptions.has(event.session_id)) push(conn, event);
};

const wss = new WebSocketServer({ noServer: true });
server.on('upgrade', (req, socket, head) => {
  if (new URL(req.url ?? '/', 'http://demo.invalid').pathname !== '/v1/ws') {
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    const conn: Connection = { id: `conn_${randomUUID()}`, connectedAt: new Date().toISOString(), remote: req.socket.remoteAddress ?? '', socket: ws, subscriptions: new Set() };
    connections.set(conn.id, conn);
    ws.on('close', () => connections.delete(conn.id));
    ws.send(JSON.stringify({ type: 'hello', protocol_version: 2, connection_id: conn.id, server_time: new Date().toISOString(), heartbeat_ms: 30000 }));
    ws.on('message', (data) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(String(data)) as Record<string, unknown>;
      } catch {
        ws.send(JSON.stringify({ type: 'error', code: 40002, msg: 'message is not JSON' }));
        return;
      }
      if (msg.type === 'ping') {
        ws.send(JSON.stringify({ type: 'pong', server_time: new Date().toISOString() }));
      } else if (msg.type === 'subscribe' || msg.type === 'replay') {
        const id = String(msg.session_id);
        const session = store.get(id);
        if (!session) {
          ws.send(JSON.stringify({ type: 'error', code: 40401, msg: 'unknown session', session_id: id }));
          return;
        }
        const cursor = Number(msg.cursor ?? 0);
        if (cursor > session.cursor) {
          ws.send(JSON.stringify({ type: 'resync_required', session_id: id, cursor, head: session.cursor }));
          return;
        }
        const backlog = store.eventsAfter(id, cursor);
        for (const event of backlog) push(conn, event);
        if (msg.type === 'subscribe') {
          conn.subscriptions.add(id);
          ws.send(JSON.stringify({ type: 'subscribed', session_id: id, cursor: session.cursor, replayed: backlog.length }));
        } else {
          ws.send(JSON.stringify({ type: 'replay_done', session_id: id, from: cursor, to: session.cursor, count: backlog.length }));
        }
      } else {
        ws.send(JSON.stringify({ type: 'error', code: 40003, msg: `unknown message type ${String(msg.type)}` }));
      }
    });
  });
});

server.listen(0, '127.0.0.1', () => {
  port = (server.address() as { port: number }).port;
  process.stdout.write(`READY ${JSON.stringify({ port, variant })}\n`);
});

process.on('SIGTERM', () => {
  for (const conn of connections.values()) conn.socket.terminate();
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
});
