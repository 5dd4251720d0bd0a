// The demo service's state: sessions and each session's event log.
//
// Plain in-memory data with the volatile values real services put on the wire:
// session_<uuid> ids, ULID message ids, ISO timestamps, epoch milliseconds and
// the server's home directory. Each session's events are numbered from 1; a
// cursor is the seq of the last event a client has seen.
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';

/** One session as the API shows it. */
export interface Session {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  archived: boolean;
  forked_from: string | null;
  workdir: string;
  /** Seq of the session's latest event. */
  cursor: number;
}

/** One event in a session's log. */
export interface SessionEvent {
  seq: number;
  event_id: string;
  type: string;
  session_id: string;
  at: string;
  time: number;
  data: Record<string, unknown>;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID (https://github.com/ulid/spec): 48-bit time + 80 random bits, Crockford base32. */
export function ulid(now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += CROCKFORD[bytes[i]! % 32];
  return time + rand;
}

/** The sessions and their events; `listener` hears every appended event (for live WebSocket pushes). */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly logs = new Map<string, SessionEvent[]>();
  /** Called for every new event. */
  listener: (event: SessionEvent) => void = () => {};

  constructor(private readonly home: string) {}

  /** Creates a session (optionally as a fork) and logs session.created. */
  create(title: string, forkedFrom: string | null = null): Session {
    const at = new Date().toISOString();
    const id = `session_${randomUUID()}`;
    const slug = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'untitled';
    const session: Session = {
      id, title, created_at: at, updated_at: at, archived: false, forked_from: forkedFrom,
      workdir: join(this.home, 'workspaces', slug), cursor: 0,
    };
    this.sessions.set(id, session);
    this.logs.set(id, []);
    this.append(id, forkedFrom ? 'session.forked' : 'session.created', { title, ...(forkedFrom ? { forked_from: forkedFrom } : {}) });
    return session;
  }

  /** The session with this id, if any. */
  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Sessions in creation order, archived or not. */
  list(archived: boolean): Session[] {
    return [...this.sessions.values()].filter((s) => s.archived === archived);
  }

  /** The session's events after `cursor`. */
  eventsAfter(id: string, cursor: number): SessionEvent[] {
    return (this.logs.get(id) ?? []).filter((e) => e.seq > cursor);
  }

  /** Applies a change, bumps updated_at and logs an event. */
  update(id: string, type: string, change: Partial<Session>, data: Record<string, unknown> = {}): Session {
    const session = this.sessions.get(id)!;
    Object.assign(session, change, { updated_at: new Date().toISOString() });
    this.append(id, type, data);
    return session;
  }

  /** Appends an event to a session's log. */
  append(id: string, type: string, data: Record<string, unknown>): SessionEvent {
    const log = this.logs.get(id)!;
    const time = Date.now();
    const event: SessionEvent = {
      seq: log.length + 1, event_id: ulid(time), type, session_id: id, at: new Date(time).toISOString(), time, data,
    };
    log.push(event);
    this.sessions.get(id)!.cursor = event.seq;
    this.listener(event);
    return event;
  }
}
