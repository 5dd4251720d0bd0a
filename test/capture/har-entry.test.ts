// capture/har-entry.ts: what an entry is whoever wrote it, with entries
// shaped as bb, Chrome, Firefox and mitmproxy write them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isEventStreamEntry, isH2OrLater, isWebSocketEntry, sseEventsOf } from '../../capture/har-entry.js';
import type { HarEntry } from '../../capture/har.js';
import { entry } from '../helpers/har.js';

const at = (extra: Record<string, unknown>) => entry('https://app.test/feed', '2024-05-01T10:00:00.000Z', extra) as unknown as HarEntry;
const stream = (content: Record<string, unknown>, headers: Array<{ name: string; value: string }> = []) =>
  at({ time: 250, response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers, content: { size: 1, mimeType: 'text/event-stream', ...content }, redirectURL: '', headersSize: -1, bodySize: -1 } });
const t0 = Date.parse('2024-05-01T10:00:00.000Z') / 1000;

describe('sseEventsOf', () => {
  it('the events a producer split, as they are', () => {
    const events = [{ time: t0 + 0.1, eventName: 'tick', eventId: '1', data: 'a' }];
    assert.equal(sseEventsOf(at({ _eventSourceMessages: events })), events);
  });

  it('a body kept whole, as text or base64: its events at the response\'s end, a last event without its blank line left out', () => {
    const text = 'event: tick\ndata: a\n\n: comment\ndata: b\nid: 2\n\ndata: cut';
    for (const content of [{ text }, { text: Buffer.from(text).toString('base64'), encoding: 'base64' }]) {
      assert.deepEqual(sseEventsOf(stream(content)).map((e) => [e.time, e.eventName, e.eventId, e.data]), [[t0 + 0.25, 'tick', '', 'a'], [t0 + 0.25, 'message', '2', 'b']]);
    }
  });

  it('no body kept: no events', () => assert.deepEqual(sseEventsOf(stream({})), []));
});

describe('isEventStreamEntry, isWebSocketEntry, isH2OrLater', () => {
  it('an event stream by its Content-Type header, else the content\'s mimeType', () => {
    assert.equal(isEventStreamEntry(stream({})), true);
    assert.equal(isEventStreamEntry(stream({ mimeType: '' }, [{ name: 'Content-Type', value: 'text/event-stream; charset=utf-8' }])), true);
    assert.equal(isEventStreamEntry(at({})), false);
  });

  it('a WebSocket by Chrome\'s marker, its messages or a 101; an HTTP/2 one (a CONNECT answered 200) by the first two', () => {
    assert.equal(isWebSocketEntry(at({ status: 101 })), true);
    assert.equal(isWebSocketEntry(at({ method: 'CONNECT', _resourceType: 'websocket' })), true);
    assert.equal(isWebSocketEntry(at({ method: 'CONNECT', _webSocketMessages: [] })), true);
    assert.equal(isWebSocketEntry(at({ method: 'CONNECT' })), false);
  });

  it('HTTP/2 or later as each producer writes it', () => {
    for (const v of ['HTTP/2.0', 'http/2.0', 'h2', 'h3', 'HTTP/3']) assert.equal(isH2OrLater(at({ request: { ...at({}).request, httpVersion: v } })), true, v);
    assert.equal(isH2OrLater(at({})), false);
  });
});
