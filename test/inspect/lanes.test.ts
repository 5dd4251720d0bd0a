// laneLabels: what tells lanes apart when they share a host and path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HarWebSocketMessage } from '../../capture/har.js';
import { laneLabels, laneLabelText } from '../../inspect/lanes.js';

const text = (data: string): HarWebSocketMessage => ({ type: 'send', time: 0, opcode: 1, data });
const conn = (url: string, ...messages: string[]) => ({ url, messages: messages.map(text) });

describe('laneLabels', () => {
  it('shows the query parameter that differs, from where the values part ways (two Socket.IO clients)', () => {
    const sid = 'Zt0aQ3xX9kLmNoPqRsTu';
    const labels = laneLabels([
      conn(`ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket&sid=${sid}A1`),
      conn(`ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket&sid=${sid}B2`),
    ]);
    assert.deepEqual(labels.map(laneLabelText), [
      '127.0.0.1:3000 /socket.io/ sid=…sTuA1',
      '127.0.0.1:3000 /socket.io/ sid=…sTuB2',
    ]);
  });

  it('shows the first message that differs when the URLs are the same', () => {
    const labels = laneLabels([
      conn('ws://h.test/live', '40', '42["join",{"room":"kitchen"}]'),
      conn('ws://h.test/live', '40', '42["join",{"room":"garden"}]'),
      conn('ws://h.test/other?x=1', 'hi'),
    ]);
    assert.deepEqual(labels.map(laneLabelText), [
      'h.test /live “…":"kitchen"}]”',
      'h.test /live “…":"garden"}]”',
      'h.test /other ?x=1',
    ]);
  });

  it('leaves the difference empty when nothing differs, and reads a URL that does not parse as written', () => {
    assert.deepEqual(laneLabels([conn('ws://h.test/a', 'x'), conn('ws://h.test/a', 'x'), conn('not a url')]), [
      { where: 'h.test /a', differs: '' }, { where: 'h.test /a', differs: '' }, { where: 'not a url', differs: '' },
    ]);
  });
});
