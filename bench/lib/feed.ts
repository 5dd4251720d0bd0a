// A page's share of a live view feed (ui/server.ts: `GET /feed/<name>`,
// server-sent events of `data: <json>`), read in the benchmark's process: each
// event handed over as it arrives, with its type, and the bytes read so far.
// A stand-in for a browser tab that keeps up; what the tab then draws is not
// bb's work.
import { request } from 'undici';

/** An open feed. */
export interface Feed {
  /** Bytes read so far. */
  bytes: number;
  /** Events read so far. */
  events: number;
  /** Resolves when the feed ends (bb closed it, or close()). */
  ended: Promise<void>;
  close(): void;
}

/** The type of an event's JSON text (`{"type":"row",...}` → row), without parsing the rest. */
function typeOf(data: string): string {
  return /^\{"type":"([a-z-]+)"/.exec(data)?.[1] ?? '';
}

/** Opens `url` (a feed) and calls `onEvent` with each event's type and JSON text as it arrives. */
export async function openFeed(url: string, onEvent: (type: string, data: string) => void): Promise<Feed> {
  const res = await request(url);
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
  const feed: Feed = { bytes: 0, events: 0, ended: Promise.resolve(), close: () => res.body.destroy() };
  feed.ended = (async () => {
    // The text not yet cut into events, in pieces: a big event comes in many chunks, and joining or searching it
    // whole at each one would be quadratic.
    let pending: string[] = [];
    try {
      for await (const chunk of res.body) {
        feed.bytes += (chunk as Buffer).length;
        const piece = String(chunk);
        const last = pending.at(-1);
        const ends = piece.includes('\n\n') || (piece.startsWith('\n') && last !== undefined && last.endsWith('\n'));
        pending.push(piece);
        if (!ends) continue;
        const text = pending.join('');
        const end = text.lastIndexOf('\n\n');
        pending = [text.slice(end + 2)];
        for (const event of text.slice(0, end).split('\n\n')) {
          if (!event.startsWith('data: ')) continue;
          feed.events++;
          const data = event.slice('data: '.length);
          onEvent(typeOf(data), data);
        }
      }
    } catch {
      // destroyed by close()
    }
  })();
  return feed;
}

/** Resolves once `done()` holds (checked every 5 ms); rejects when the feed ended first or `timeoutMs` passed. */
export async function until(feed: Feed, done: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  let ended = false;
  void feed.ended.then(() => (ended = true));
  for (const end = Date.now() + timeoutMs; !done(); ) {
    if (ended) throw new Error(`the feed ended before ${what}`);
    if (Date.now() > end) throw new Error(`no ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
