// An incremental text/event-stream parser, per the HTML standard's
// "Interpreting an event stream" (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
// Fed chunk by chunk with the time each chunk crossed, so every event gets
// the time its dispatching blank line arrived.

/** A server-sent event as it arrived (a HAR `_eventSourceMessages` item). */
export interface EventStreamMessage {
  /** Epoch seconds (float), like WebSocket messages. */
  time: number;
  eventName: string;
  eventId: string;
  data: string;
  /** The reconnection time (ms) a `retry:` line set since the event before, when one did: a client's reconnection delay. */
  retry?: number;
}

/** Parses an event stream as it arrives. */
export class EventStreamParser {
  /** Events dispatched so far. */
  readonly events: EventStreamMessage[] = [];
  private readonly decoder = new TextDecoder('utf-8');
  private line = '';
  private afterCR = false;
  private first = true;
  private data: string[] = [];
  private eventType = '';
  private lastEventId = '';
  private retry: number | undefined;

  /** `each`: given, each event goes to it as it is dispatched, and `events` stays empty (a long stream is not held). */
  constructor(private readonly each?: (event: EventStreamMessage) => void) {}

  /** Feeds one chunk that arrived at `timeMs` (epoch ms). */
  push(chunk: Uint8Array, timeMs: number): void {
    this.feed(this.decoder.decode(chunk, { stream: true }), timeMs);
  }

  /** Ends the stream: a last event without its blank line is discarded, as the standard says. */
  end(timeMs: number): EventStreamMessage[] {
    this.feed(this.decoder.decode(), timeMs);
    return this.events;
  }

  /** Parses a whole stream held as text (a body another producer recorded); times are 0. */
  static parseText(text: string): EventStreamMessage[] {
    const p = new EventStreamParser();
    p.feed(text, 0);
    return p.end(0);
  }

  /** Calls `each` with every event of a whole stream held as text, one at a time (times are 0). */
  static eachInText(text: string, each: (event: EventStreamMessage) => void): void {
    const p = new EventStreamParser(each);
    p.feed(text, 0);
    p.end(0);
  }

  private feed(text: string, timeMs: number): void {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '\n' && this.afterCR) {
        // CRLF: the CR already ended the line.
        this.afterCR = false;
        continue;
      }
      this.afterCR = ch === '\r';
      if (ch === '\r' || ch === '\n') {
        this.processLine(this.line, timeMs);
        this.line = '';
      } else {
        this.line += ch;
      }
    }
  }

  private processLine(line: string, timeMs: number): void {
    if (line === '') {
      this.dispatch(timeMs);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        // Only ASCII digits set the reconnection time; it makes no event (it goes with the next one).
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        // Unknown fields do nothing.
        break;
    }
  }

  private dispatch(timeMs: number): void {
    if (this.data.length === 0) {
      this.eventType = '';
      return;
    }
    const event: EventStreamMessage = {
      time: timeMs / 1000,
      eventName: this.eventType || 'message',
      eventId: this.lastEventId,
      data: this.data.join('\n'),
      ...(this.retry !== undefined ? { retry: this.retry } : {}),
    };
    if (this.each) this.each(event);
    else this.events.push(event);
    this.retry = undefined;
    this.data = [];
    this.eventType = '';
  }
}
