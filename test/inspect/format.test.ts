// connectionHeading: a connection's, gRPC call's or SSE stream's heading line in bb frames counts its messages in English.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HarWebSocketMessage } from '../../capture/har.js';
import { connectionHeading, messageLine } from '../../inspect/format.js';
import type { WsConnectionView } from '../../inspect/model.js';

const style = { color: false, width: 120 };
const message = (data: string): HarWebSocketMessage => ({ type: 'receive', time: 0, opcode: 1, data });
const view = (count: number, extra: Partial<WsConnectionView> = {}): WsConnectionView => ({
  id: 'c1', url: 'ws://127.0.0.1:3000/chat', entry: 0, exchange: 1, openedAt: 0, messages: Array.from({ length: count }, (_, i) => message(`m${i}`)), ...extra,
});

describe('connectionHeading', () => {
  it('says "1 message" for one, "N messages" for more, "N of M messages" when filtered', () => {
    assert.match(connectionHeading(view(1), style, 1), /\(1 message\)$/);
    assert.match(connectionHeading(view(2), style, 2), /\(2 messages\)$/);
    assert.match(connectionHeading(view(1), style, 3), /\(1 of 3 messages\)$/);
  });

  it('counts a gRPC call\'s messages and an SSE stream\'s events the same way', () => {
    assert.match(connectionHeading(view(1, { grpc: { status: 0 } }), style, 1), /\(1 message; grpc 0 OK\)$/);
    assert.match(connectionHeading(view(1, { sse: { end: 'server' } }), style, 1), /\(1 event; /);
    assert.match(connectionHeading(view(2, { sse: { end: 'server' } }), style, 2), /\(2 events; /);
  });
});

describe('messageLine', () => {
  const style = { color: false, width: 120 } as Parameters<typeof messageLine>[2];
  const at = (extra: Partial<HarWebSocketMessage>): HarWebSocketMessage => ({ type: 'receive', time: 10, opcode: 1, data: 'hello', ...extra });
  it('shows a message cut at the body cap by what was recorded, and one past its conversation\'s budget as size and hash only', () => {
    assert.match(messageLine(at({ data: 'hel', _bb: { seq: 3, truncated: 3, size: 5000 } } as Partial<HarWebSocketMessage>), 9, style), / 4\.9KB {2}\(recorded 3B\) hel/);
    assert.match(messageLine(at({ data: '', _bb: { seq: 4, truncated: 0, size: 5000, restHash: 'sha256:00' } } as Partial<HarWebSocketMessage>), 9, style), / 4\.9KB {2}\(size and hash only\) /);
    assert.doesNotMatch(messageLine(at({ _bb: { seq: 5 } } as Partial<HarWebSocketMessage>), 9, style), /recorded|hash only/);
  });
});
