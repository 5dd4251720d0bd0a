// The h2 benchmark's peer baseline: a re-encoding h2 proxy built on
// node:http2, the way HTTP Toolkit/mockttp and most Node proxies relay h2
// (parse each stream into objects, open a stream of its own upstream, copy
// headers and bodies across). One upstream session, shared. No recording.
//
//   node <compiled> <upstream port>
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { serveHelper } from './lib/serve.js';

const upstreamPort = Number(process.argv[2]);
let upstream: http2.ClientHttp2Session | undefined;
const session = (): http2.ClientHttp2Session => {
  if (!upstream || upstream.closed || upstream.destroyed) {
    upstream = http2.connect(`http://127.0.0.1:${upstreamPort}`);
    upstream.on('error', () => {});
  }
  return upstream;
};
const HOP = new Set([':status', 'connection', 'keep-alive', 'transfer-encoding']);

const server = http2.createServer({ settings: { maxConcurrentStreams: 1000 } });
server.on('stream', (stream, headers) => {
  stream.on('error', () => {});
  const out: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (name !== ':scheme' || value) out[name] = value;
  const req = session().request(out);
  req.on('error', () => stream.destroy());
  req.on('response', (res) => {
    const back: http2.OutgoingHttpHeaders = { ':status': res[':status'] };
    for (const [name, value] of Object.entries(res)) if (!HOP.has(name)) back[name] = value;
    stream.respond(back);
    req.pipe(stream);
  });
  stream.pipe(req);
});
server.on('sessionError', () => {});
server.listen(0, '127.0.0.1', () => {
  serveHelper((server.address() as AddressInfo).port, (what) => {
    if (what === 'close') {
      upstream?.destroy();
      server.close();
      return true;
    }
    return {};
  });
});
