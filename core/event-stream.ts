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
  /** Its lines held more than the parser's maxEventChars: `data` is empty, the event only counted. */
  oversized?: true;
}

/** Parses an event stream as it arrives. */
export class EventStreamParser {
  /** Events dispatched so far. */
  readonly events: EventStreamMessage[] = [];
  private readonly decoder = new TextDecoder('utf-8');
  /** The line so far (empty while a comment or an oversized event is skipped). */
  private line = '';
  /** Characters of the line so far, kept or not (0: the next line end ends a blank line). */
  private lineLength = 0;
  /** The line is a comment: nothing of it is kept. */
  private comment = false;
  private afterCR = false;
  private first = true;
  private data: string[] = [];
  /** Characters of the event's data lines so far (whole lines, each with its line end). */
  private dataLength = 0;
  /** The event's lines went past maxEventChars: nothing more of it is kept until its blank line. */
  private oversized = false;
  private eventType = '';
  private lastEventId = '';
  private retry: number | undefined;

  /**
   * `each`: given, each event goes to it as it is dispatched, and `events` stays empty (a long stream is not held).
   * `maxEventChars`: an event whose data lines and current line hold more characters is dispatched with `oversized` and no
   * data, its text not held (a live feed of a peer's stream must not hold an event that never ends); default no limit.
   */
  constructor(
    private readonly each?: (event: EventStreamMessage) => void,
    private readonly maxEventChars = Infinity,
  ) {}

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

  // Lines end at CR, LF or CRLF (a CRLF may be split between two chunks); a line's text is taken a run at a time.
  private feed(text: string, timeMs: number): void {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      if (c === 0x0a && this.afterCR && i === start) {
        // CRLF: the CR already ended the line.
        this.afterCR = false;
        start = i + 1;
        continue;
      }
      this.take(text, start, i);
      this.endLine(timeMs);
      this.afterCR = c === 0x0d;
      start = i + 1;
    }
    if (start < text.length) {
      this.take(text, start, text.length);
      this.afterCR = false;
    }
  }

  // Adds text[from, to) to the line (a comment's, or past the event's limit, only counted).
  private take(text: string, from: number, to: number): void {
    if (to === from) return;
    if (this.lineLength === 0) this.comment = text.charCodeAt(from) === 0x3a;
    this.lineLength += to - from;
    if (this.comment || this.oversized) return;
    if (this.dataLength + this.lineLength > this.maxEventChars) {
      this.oversized = true;
      this.line = '';
      this.data = [];
      this.dataLength = 0;
      return;
    }
    this.line = this.line === '' ? text.slice(from, to) : this.line + text.slice(from, to);
  }

  private endLine(timeMs: number): void {
    const blank = this.lineLength === 0;
    const line = this.line;
    const skipped = this.comment || this.oversized;
    this.line = '';
    this.lineLength = 0;
    this.comment = false;
    if (blank) this.dispatch(timeMs);
    else if (!skipped) this.processLine(line);
  }

  // A line that is neither blank nor a comment.
  private processLine(line: string): void {
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
        this.dataLength += line.length + 1;
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
    const oversized = this.oversized;
    this.oversized = false;
    if (this.data.length === 0 && !oversized) {
      this.eventType = '';
      return;
    }
    const event: EventStreamMessage = {
      time: timeMs / 1000,
      eventName: this.eventType || 'message',
      eventId: this.lastEventId,
      data: oversized ? '' : this.data.join('\n'),
      ...(this.retry !== undefined ? { retry: this.retry } : {}),
      ...(oversized ? { oversized: true as const } : {}),
    };
    if (this.each) this.each(event);
    else this.events.push(event);
    this.retry = undefined;
    this.data = [];
    this.dataLength = 0;
    this.eventType = '';
  }
}
