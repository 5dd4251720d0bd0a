// connectionHeading: a connection's, gRPC call's or SSE stream's heading line in bb frames counts its messages in English.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HarWebSocketMessage } from '../../capture/har.js';
import { connectionHeading } from '../../inspect/format.js';
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
