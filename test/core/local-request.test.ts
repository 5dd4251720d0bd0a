import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { foreignRequestReason } from '../../core/index.js';

const PORT = 9000;

describe('foreignRequestReason', () => {
  it('takes one loopback Host, with the endpoint port or none', () => {
    const own = [
      '127.0.0.1:9000', '127.0.0.1', '127.1.2.3:9000', '127.255.255.255:9000',
      'localhost:9000', 'localhost', 'LOCALHOST:9000', 'LocalHost', 'localhost.:9000', 'localhost.', '127.0.0.1.:9000',
      '[::1]:9000', '[::1]', '[0:0:0:0:0:0:0:1]:9000', '[::ffff:127.0.0.1]:9000', '[::FFFF:7F00:1]:9000',
    ];
    for (const host of own) assert.equal(foreignRequestReason({ host: [host] }, PORT), undefined, host);
  });

  it('refuses any other Host: rebinding names, other ports, userinfo tricks, malformed, missing, repeated', () => {
    const foreign: Array<string[] | undefined> = [
      // DNS-rebinding names: they resolve to loopback, but a web page's author controls them.
      ['127.0.0.1.nip.io:9000'], ['127-0-0-1.sslip.io:9000'], ['localhost.example.com:9000'], ['a.localhost:9000'], ['rebind.example'], ['localhost..:9000'],
      // Other ports: another server's pages share the machine, not the origin.
      ['127.0.0.1:9001'], ['localhost:80'], ['[::1]:1'], ['127.0.0.1:09000'], ['127.0.0.1:'], ['127.0.0.1:9000:9000'],
      // Not loopback at all, or loopback only after a lenient parse.
      ['0.0.0.0:9000'], ['10.0.0.1:9000'], ['[::]:9000'], ['[::2]:9000'], ['127.1:9000'], ['2130706433:9000'], ['0x7f000001:9000'], ['127.0.0.256:9000'],
      // Userinfo and other URL tricks: whatever a lenient parser would take as the host, Host has no such parts.
      ['evil.example@127.0.0.1:9000'], ['127.0.0.1:9000@evil.example'], ['127.0.0.1:9000/evil'], ['127.0.0.1\\@evil.example'], ['127.0.0.1 :9000'], [' 127.0.0.1:9000'], ['127.0.0.1#@evil.example'],
      // Brackets hold IPv6 only; IPv6 needs them.
      ['[127.0.0.1]:9000'], ['::1'], ['[::1'], ['::1]:9000'],
      // Missing, empty, repeated.
      undefined, [], [''], ['127.0.0.1:9000', '127.0.0.1:9000'], ['127.0.0.1:9000', 'evil.example'],
    ];
    for (const host of foreign) {
      const reason = foreignRequestReason({ host }, PORT);
      assert.match(reason ?? '', /^refused: .*127\.0\.0\.1:9000/, JSON.stringify(host));
      assert.doesNotMatch(reason!, /\n/);
    }
  });

  it('takes no Origin, or an http origin of a loopback host with the endpoint port', () => {
    for (const origin of [undefined, [], ['http://127.0.0.1:9000'], ['http://localhost:9000'], ['http://[::1]:9000'], ['HTTP://LOCALHOST:9000'], ['http://127.0.0.2:9000']]) {
      assert.equal(foreignRequestReason({ host: ['127.0.0.1:9000'], origin }, PORT), undefined, JSON.stringify(origin));
    }
    // An origin leaves out port 80, so only an endpoint on 80 matches a portless one.
    assert.equal(foreignRequestReason({ host: ['localhost'], origin: ['http://localhost'] }, 80), undefined);
  });

  it('refuses a foreign Origin, even with a loopback Host', () => {
    const foreign = [
      ['null'], ['http://evil.example'], ['http://127.0.0.1.nip.io:9000'], ['http://127.0.0.1:9001'], ['http://127.0.0.1'], ['http://localhost:80'],
      ['https://127.0.0.1:9000'], ['ws://127.0.0.1:9000'], ['file://'], ['http://127.0.0.1:9000/'], ['http://evil.example@127.0.0.1:9000'], ['http://127.0.0.1:9000@evil.example'],
      ['127.0.0.1:9000'], [''], ['http://127.0.0.1:9000', 'http://evil.example'], ['http://127.0.0.1:9000', 'http://127.0.0.1:9000'],
    ];
    for (const origin of foreign) {
      const reason = foreignRequestReason({ host: ['127.0.0.1:9000'], origin }, PORT);
      assert.match(reason ?? '', /^refused: Origin /, JSON.stringify(origin));
      assert.doesNotMatch(reason!, /\n/);
    }
  });

  it('shows a long or odd header value quoted and cut short', () => {
    const reason = foreignRequestReason({ host: ['x'.repeat(5000) + '\n"'] }, PORT)!;
    assert.ok(reason.length < 300, reason);
    assert.match(reason, /^refused: Host "x{80}…"/);
  });
});
