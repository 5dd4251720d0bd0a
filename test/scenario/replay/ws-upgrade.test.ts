// The replayed upgrade's head and the client's checks of the 101, as plain
// data (the handshake over sockets: ws-upgrade.cli.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { acceptFor, badSwitch, freshKey, upgradeRequest } from '../../../scenario/replay/ws-upgrade.js';

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

describe('upgradeRequest', () => {
  it('writes the recorded head as it was: order, case, duplicates; Host the target\'s, the key the given one', () => {
    const head = upgradeRequest({
      method: 'GET',
      target: '/chat?room=7',
      headers: [['X-First', '1'], ['Host', 'old:1'], ['upgrade', 'websocket'], ['connection', 'Upgrade'], ['sec-websocket-key', 'recorded=='], ['X-Dup', 'a'], ['X-Dup', 'b'], ['sec-websocket-version', '13']],
    }, 'new:2', KEY);
    assert.equal(head.head.toString('latin1'), 'GET /chat?room=7 HTTP/1.1\r\nX-First: 1\r\nHost: new:2\r\nupgrade: websocket\r\nconnection: Upgrade\r\n' +
      `sec-websocket-key: ${KEY}\r\nX-Dup: a\r\nX-Dup: b\r\nsec-websocket-version: 13\r\n\r\n`);
    assert.equal(head.body.length, 0);
  });

  it('adds what a WebSocket recorded over HTTP/2 lacks (an extended CONNECT): Host first, the upgrade headers last', () => {
    const head = upgradeRequest({ method: 'CONNECT', target: '/ws', version: '1.1', headers: [['origin', 'https://app'], ['sec-websocket-version', '13']] }, 'new:2', KEY);
    assert.equal(head.head.toString('latin1'), 'GET /ws HTTP/1.1\r\nHost: new:2\r\norigin: https://app\r\nsec-websocket-version: 13\r\n' +
      `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${KEY}\r\n\r\n`);
  });
});

describe('badSwitch', () => {
  const good = ['Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Accept', 's3pPLMBiTxaQ9kYGzzhZRbK+xOo='];
  const table: Array<[string, string[], string | undefined]> = [
    ["RFC 6455 §1.3's example", good, undefined],
    ['names and tokens in any case, Connection listing more', ['upgrade', 'WebSocket', 'connection', 'keep-alive, upgrade', 'sec-websocket-accept', acceptFor(KEY)], undefined],
    ['no Upgrade', good.slice(2), 'Invalid Upgrade header'],
    ['Upgrade to another protocol', ['Upgrade', 'h2c', ...good.slice(2)], 'Invalid Upgrade header'],
    ['no Connection: upgrade', ['Upgrade', 'websocket', 'Connection', 'keep-alive', ...good.slice(4)], 'Invalid Connection header'],
    ["an Accept for another key", [...good.slice(0, 5), acceptFor(freshKey())], 'Invalid Sec-WebSocket-Accept header'],
  ];
  for (const [name, raw, expected] of table) {
    it(`${name}: ${expected ?? 'accepted'}`, () => assert.equal(badSwitch(raw, KEY), expected));
  }
});
