// Text for people: the lines `bb frames` and `bb show` print. Pure: the CLI
// decides the width and whether to colour (TTY, NO_COLOR) and passes a Style.
import type { HarWebSocketMessage, ProtoSchema } from '../capture/index.js';
import {
  opcodeName, payloadBytes, payloadText, statusMark,
  type EntryRow, type TimelineEvent, type WsConnectionView,
} from './model.js';
import { grpcStatusText, messageKindOf, sseFacts, streamEndText } from './streams.js';
import { grpcSchemaAt, grpcShown, shownInline, type GrpcSchemaOf, type ShownMessage } from './grpc-tree.js';

/** How to render. */
export interface Style {
  /** ANSI colours on. */
  color: boolean;
  /** Line width to fit (columns). */
  width: number;
  /** The .proto files that name gRPC messages' fields (the config's normalize.proto); absent: field numbers. */
  proto?: ProtoSchema;
}

const ANSI = { dim: '2', red: '31', green: '32', yellow: '33', cyan: '36', bold: '1' } as const;

function paint(style: Style, colour: keyof typeof ANSI, text: string): string {
  return style.color && text !== '' ? `\u001b[${ANSI[colour]}m${text}\u001b[0m` : text;
}

/** A byte count for people: 512B, 1.5KB, 3.2MB. Negative = unknown ("-"). */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '-';
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)}MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)}GB`;
}

/** Seconds since a start, "+1.234s" ("?" when either is unknown). */
export function formatOffset(seconds: number, since: number): string {
  const d = seconds - since;
  if (!Number.isFinite(d)) return '?';
  return `${d < 0 ? '-' : '+'}${Math.abs(d).toFixed(3)}s`;
}

/** Escapes control characters so a payload stays on one line ("\n", "\t", "\x1b", "\u2028"). */
export function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (ch) => {
    switch (ch) {
      case '\n': return '\\n';
      case '\r': return '\\r';
      case '\t': return '\\t';
      default: {
        const code = ch.charCodeAt(0);
        return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
      }
    }
  });
}

/** Cuts a string to `width` characters, ending in "…" when cut. */
export function clip(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = [...text];
  return chars.length <= width ? text : chars.slice(0, Math.max(0, width - 1)).join('') + '…';
}

/**
 * A one-line preview of a message's payload; a gRPC message's fields named
 * when `schemaOf` defines its method. `grpc`: the message already decoded
 * (grpcOf; null: not a decodable gRPC message), for a caller that shows the
 * decoded fields too.
 */
export function preview(m: HarWebSocketMessage, schemaOf?: GrpcSchemaOf, grpc: ShownMessage | null = grpcOf(m, schemaOf)): string {
  if (m.type === 'error') {
    const code = (m._bb as { error?: unknown } | undefined)?.error;
    return `${typeof code === 'string' ? `${code}: ` : ''}${escapeControls(m.data)}`;
  }
  const sse = sseFacts(m);
  // An event named other than "message", or with an id, says so before its data (as `bb show --entry` does).
  if (sse && (sse.event !== 'message' || sse.id !== '')) {
    return `${sse.event !== 'message' ? `event ${escapeControls(sse.event)}` : 'message'}${sse.id ? ` id ${escapeControls(sse.id)}` : ''}: ${escapeControls(m.data)}`;
  }
  // A gRPC message reads as its decoded protobuf when it is one (grpc-tree.ts), else as hex below.
  if (grpc) return escapeControls(shownInline(grpc));
  if (m.opcode === 1 || m.opcode === 8 || m.opcode === 9 || m.opcode === 10) {
    const text = payloadText(m);
    if (m.opcode === 1 || !/\ufffd/.test(text)) return escapeControls(text);
  }
  const bytes = payloadBytes(m);
  return bytes.length === 0 ? '' : `0x${bytes.subarray(0, 32).toString('hex')}${bytes.length > 32 ? '…' : ''}`;
}

/** A gRPC message decoded (grpc-tree.ts grpcShown), or null when the message is not one or does not decode. */
export function grpcOf(m: HarWebSocketMessage, schemaOf?: GrpcSchemaOf): ShownMessage | null {
  return (messageKindOf(m, opcodeName) === 'grpc' ? grpcShown(m, schemaOf) : undefined) ?? null;
}

const arrow = (m: HarWebSocketMessage, style: Style): string => {
  const direction = m.type === 'error' ? (m._bb as { direction?: string } | undefined)?.direction : m.type;
  if (direction === 'send') return paint(style, 'green', '→');
  if (direction === 'receive') return paint(style, 'cyan', '←');
  return ' ';
};

/** One message line: seq, [connection], time since open, arrow, opcode, size, preview; `url` (the stream's) picks a gRPC method's types in style.proto. */
export function messageLine(m: HarWebSocketMessage, openedAt: number, style: Style, connection?: string, url?: string): string {
  const seq = typeof m._bb?.seq === 'number' ? String(m._bb.seq) : '-';
  const op = messageKindOf(m, opcodeName);
  // A message cut at the body cap shows its whole size, and its preview says how much was kept.
  const whole = m._bb?.truncated !== undefined ? m._bb.size : undefined;
  const size = m.type === 'error' ? '' : formatSize(whole ?? payloadBytes(m).length);
  const parts = [
    paint(style, 'dim', seq.padStart(6)),
    ...(connection !== undefined ? [connection.padEnd(6)] : []),
    formatOffset(m.time, openedAt).padStart(11),
    arrow(m, style),
    (m.type === 'error' ? paint(style, 'red', op.padEnd(6)) : op.padEnd(6)),
    size.padStart(7),
  ];
  const head = parts.join(' ');
  const used = visibleLength(head) + 2;
  // None kept: past its conversation's budget (--ws-budget), only its size and hash were recorded.
  const cut = whole === undefined ? '' : paint(style, 'dim', m._bb!.truncated === 0 ? '(size and hash only) ' : `(recorded ${formatSize(m._bb!.truncated!)}) `);
  return `${head}  ${cut}${clip(preview(m, grpcSchemaAt(style.proto, url)), Math.max(10, style.width - used - visibleLength(cut)))}`;
}

/** The heading line of one connection; `label` (lanes.ts) stands in for a URL too long for the line, so what tells it apart stays. */
export function connectionHeading(c: WsConnectionView, style: Style, total: number, label?: string): string {
  const room = Math.max(20, style.width - 40);
  if (label !== undefined && [...c.url].length > room) c = { ...c, url: label };
  const count = total === c.messages.length ? `${total} message${total === 1 ? '' : 's'}` : `${c.messages.length} of ${total} messages`;
  if (c.grpc) return paint(style, 'bold', `grpc call ${c.id}`) + `  ${clip(c.url, Math.max(20, style.width - 60))}  (${count}; ${grpcStatusText(c.grpc)})`;
  if (c.sse) {
    const events = count.replace(/messages?$/, total === 1 ? 'event' : 'events');
    return paint(style, 'bold', `sse stream ${c.id}`) + `  ${clip(c.url, Math.max(20, style.width - 60))}  (${events}; ${streamEndText(c.sse.end)})`;
  }
  return paint(style, 'bold', `connection ${c.id}`) + `  #${c.exchange}  ${clip(c.url, Math.max(20, style.width - 40))}  (${count})`;
}

/** The lines of `bb frames` for some connections; `labels[i]` (lanes.ts) stands in for conns[i]'s URL when it does not fit. */
export function framesText(conns: WsConnectionView[], totals: Map<string, number>, style: Style, labels: readonly string[] = []): string[] {
  const lines: string[] = [];
  for (const [i, c] of conns.entries()) {
    if (lines.length > 0) lines.push('');
    lines.push(connectionHeading(c, style, totals.get(c.id) ?? c.messages.length, labels[i]));
    for (const m of c.messages) lines.push(messageLine(m, c.openedAt, style, undefined, c.url));
    if (c.unlisted) lines.push(paint(style, 'dim', `(and ${c.unlisted} more not listed: ${c.grpc || c.sse ? 'the recorded body holds them' : 'only their count and a hash were kept'})`));
  }
  return lines;
}

/** The lines of `bb frames --timeline`; times are since the first event. */
export function timelineText(events: TimelineEvent[], style: Style): string[] {
  const start = Math.min(...events.map(eventTime).filter(Number.isFinite));
  return events.map((ev) => {
    if (ev.kind === 'ws') return messageLine(ev.message, start, style, ev.connection, ev.url);
    const seq = paint(style, 'dim', (ev.seq !== undefined ? String(ev.seq) : '-').padStart(6));
    const what = ev.kind === 'request'
      ? `${paint(style, 'yellow', 'http')} ${ev.method} ${ev.url}`
      : `${paint(style, 'yellow', 'http')} ${statusText(ev.status, style, statusMark(ev.errorBy))} ${ev.method} ${ev.url}`;
    const head = `${seq} ${'#' + String(ev.exchange).padEnd(5)} ${formatOffset(ev.time, start).padStart(11)} ${ev.kind === 'request' ? '▶' : '◀'} `;
    return head + clip(what, Math.max(10, style.width - visibleLength(head)));
  });
}

function eventTime(ev: TimelineEvent): number {
  return ev.kind === 'ws' ? ev.message.time : ev.time;
}

function statusText(status: number, style: Style, mark = ''): string {
  const s = `${status}${mark}`;
  return status >= 400 || status === 0 || mark === '!' ? paint(style, 'red', s) : s;
}

/** The lines of `bb show`: a header and one line per entry; times since the capture's first entry. */
export function showText(rows: EntryRow[], since: number, style: Style): string[] {
  const header = ['#', 'time', 'method', 'status', 'size', 'wire', 'ms', 'page', 'ws', 'url'];
  const table = rows.map((r) => [
    `#${r.seq ?? r.entry}`,
    formatOffset(r.time, since),
    r.method,
    `${r.status}${statusMark(r.errorBy)}`,
    formatSize(r.contentSize),
    formatSize(r.responseBodySize),
    r.duration >= 0 ? r.duration.toFixed(0) : '-',
    r.page ?? '',
    r.webSocket ? String(r.webSocketMessages) : r.grpc ? String(r.grpc.messages) : '',
    r.url + (r.error ? `  (${r.error})` : '') + (r.grpc ? `  [${grpcStatusText(r.grpc)}]` : ''),
  ]);
  const widths = header.slice(0, -1).map((h, i) => Math.max(h.length, ...table.map((row) => [...row[i]!].length)));
  const pageCol = 7;
  widths[pageCol] = Math.min(widths[pageCol]!, 16);
  const render = (cells: string[], isHeader: boolean): string => {
    const fixed = cells.slice(0, -1).map((c, i) => {
      const text = clip(c, widths[i]!);
      const padded = i === 0 || i === 2 || i === 7 ? text.padEnd(widths[i]!) : text.padStart(widths[i]!);
      if (isHeader) return paint(style, 'dim', padded);
      if (i === 3 && (cells[3]!.endsWith('!') || Number.parseInt(cells[3]!, 10) >= 400)) return paint(style, 'red', padded);
      return i === 0 ? paint(style, 'dim', padded) : padded;
    });
    const head = fixed.join('  ');
    return `${head}  ${clip(cells.at(-1)!, Math.max(10, style.width - visibleLength(head) - 2))}`;
  };
  return [render(header, true), ...table.map((row) => render(row, false))];
}

/** Length without ANSI codes. */
function visibleLength(text: string): number {
  return [...text.replace(/\u001b\[[0-9;]*m/g, '')].length;
}
