import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackHost, namesOwnAddress } from '../../core/index.js';

describe('isLoopbackHost', () => {
  it('takes localhost, 127.0.0.0/8, ::1 and IPv4-mapped loopback, bracketed or not', () => {
    for (const host of ['localhost', 'LOCALHOST', 'localhost.', '127.0.0.1', '127.1.2.3', '127.255.255.255', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:127.0.0.2', '[::ffff:127.9.9.9]', '::ffff:7f00:2']) {
      assert.equal(isLoopbackHost(host), true, host);
    }
  });

  it('refuses everything else, including names that only start like loopback', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.0.2.1', '::ffff:10.0.0.1', '::2', '127.0.0.256', '127.1', '127.0.0.1.example.com', 'localhost.example.com', '0', '']) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});

describe('namesOwnAddress', () => {
  it('takes the same port under a loopback or wildcard name while the listener is on loopback or every interface', () => {
    const cases: Array<[string, number, string, number, boolean]> = [
      ['127.0.0.1', 8080, '127.0.0.1', 8080, true],
      ['localhost', 8080, '127.0.0.1', 8080, true],
      ['[::1]', 8080, '::1', 8080, true],
      ['0.0.0.0', 8080, '127.0.0.1', 8080, true],
      ['127.0.0.1', 8080, '0.0.0.0', 8080, true],
      ['192.0.2.7', 8080, '192.0.2.7', 8080, true],
      ['127.0.0.1', 8081, '127.0.0.1', 8080, false],
      // Loopback is another interface than a listener bound to one outside address.
      ['127.0.0.1', 8080, '192.0.2.7', 8080, false],
      ['192.0.2.8', 8080, '127.0.0.1', 8080, false],
      ['example.test', 8080, '127.0.0.1', 8080, false],
    ];
    for (const [host, port, ownHost, ownPort, expected] of cases) {
      assert.equal(namesOwnAddress(host, port, { host: ownHost, port: ownPort }), expected, `${host}:${port} against ${ownHost}:${ownPort}`);
    }
  });
});
