// A mirror target's h2c sessions (scenario/shadow/mirror-h2.ts H2Sessions):
// the target's proxy tags each stream's exchange with the shared id of the
// request it carries, by the session's local port and the stream id. The
// mirror runs behind the primary, so the client's connection may close while
// a mirrored stream is still on its way: the session and its stream ids must
// stay until that stream is over (before, closing forgot the ids at once and
// such an exchange reached the candidate's capture untagged: an error in the
// report, found when the mirrors ran a moment later than the relay).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { H2Sessions } from '../../../scenario/shadow/mirror-h2.js';

const servers: http2.Http2Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** An h2c server that answers no request until `release` is called (then every one, those still to come too). */
async function slowServer(): Promise<{ url: string; release: () => void }> {
  const waiting: Array<() => void> = [];
  let released = false;
  const server = http2.createServer((_req, res) => (released ? res.end('late') : waiting.push(() => res.end('late'))));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const release = () => {
    released = true;
    waiting.splice(0).forEach((f) => f());
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release };
}

describe('H2Sessions', () => {
  it('a client connection closed while its mirrored stream is in flight keeps the stream\'s shared id until the stream is over', async () => {
    const target = await slowServer();
    const sessions = new H2Sessions(target.url);
    const { conn, opened, done } = sessions.session('client-1');
    let streamId: number | undefined;
    const request = { headers: [[':method', 'GET'], [':scheme', 'http'], [':authority', '127.0.0.1'], [':path', '/x']] as Array<[string, string]>, body: Buffer.alloc(0) };
    const outcome = conn.exchange(request, {
      what: 'mirror 42', timeoutMs: 5_000, waitMs: 5_000, onTimeout: () => {},
      onStream: (s) => {
        streamId = s;
        opened(s, 42);
      },
    });
    // The client left before the mirrored stream reached the target.
    sessions.close('client-1');
    while (streamId === undefined || conn.localPort === undefined) await new Promise((r) => setTimeout(r, 5));
    const port = conn.localPort;
    assert.equal(sessions.idAt(port, streamId), 42, 'the stream still names its shared id');
    target.release();
    const got = await outcome;
    assert.equal(got.kind, 'response');
    done();
    // Its last stream over, the session is closed and forgotten.
    assert.equal(sessions.idAt(port, streamId), undefined);
    assert.equal(conn.localPort, undefined);
  });

  it('a connection closed with no stream in flight closes at once; a new one for the same client opens anew', async () => {
    const target = await slowServer();
    const sessions = new H2Sessions(target.url);
    const first = sessions.session('client-2');
    first.done();
    sessions.close('client-2');
    const second = sessions.session('client-2');
    assert.notEqual(second.conn, first.conn);
    second.done();
    sessions.closeAll();
  });
});
