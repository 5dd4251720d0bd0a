// The h2 benchmark's upstream, in its own process: an h2c server (node:http2,
// prior knowledge) answering every stream with the same ~100-byte JSON body,
// as a small unary gRPC-like call would be. Started by bench/proxy-h2.ts.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { serveHelper } from './lib/serve.js';

const small = Buffer.from(JSON.stringify({ id: 4711, name: 'small', tags: ['a', 'b', 'c'], ok: true, price: 12.5, note: 'x'.repeat(24) }));
// h2load opens 100 streams at once on one connection: let it.
const server = http2.createServer({ settings: { maxConcurrentStreams: 1000 } });
server.on('stream', (stream) => {
  stream.on('error', () => {});
  stream.respond({ ':status': 200, 'content-type': 'application/json', 'content-length': small.length });
  stream.end(small);
});
server.on('sessionError', () => {});
server.listen(0, '127.0.0.1', () => {
  serveHelper((server.address() as AddressInfo).port, (what) => {
    if (what === 'close') {
      server.close();
      return true;
    }
    return {};
  });
});
