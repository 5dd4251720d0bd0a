// Preloaded (node --require) into a proxy helper by bench/proxy-sse.ts --hops:
// notes the monotonic time (process.hrtime, one clock for every process on
// the machine) at which a socket hands the process an SSE request or a 200
// response head ('r1', 'r2': net.Socket#push) and at which the process's
// write of one returns ('w1', 'w2'), and writes them to
// $BB_HOP_TIMES_DIR/<pid>.hops on SIGUSR2. Plain CommonJS that imports only
// Node: a helper must not load the compiler (lib/child.ts).
'use strict';
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');

const times = [];
// 'GET /sse' and 'HTTP/1.1 2' at a chunk's start; anything else is not noted.
function kind(b) {
  if (!Buffer.isBuffer(b) || b.length < 10) return '';
  if (b[0] === 0x47 && b[1] === 0x45 && b[2] === 0x54 && b[3] === 0x20 && b[4] === 0x2f && b[5] === 0x73 && b[6] === 0x73) return '1';
  if (b[0] === 0x48 && b[1] === 0x54 && b[2] === 0x54 && b[3] === 0x50 && b[9] === 0x32) return '2';
  return '';
}
const push = net.Socket.prototype.push;
net.Socket.prototype.push = function (chunk, encoding) {
  const k = kind(chunk);
  if (k) times.push(process.hrtime.bigint(), 'r' + k);
  return push.call(this, chunk, encoding);
};
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, encoding, cb) {
  const k = kind(chunk);
  const ok = write.call(this, chunk, encoding, cb);
  if (k) times.push(process.hrtime.bigint(), 'w' + k);
  return ok;
};
process.on('SIGUSR2', () => {
  const lines = [];
  for (let i = 0; i < times.length; i += 2) lines.push(`${times[i]} ${times[i + 1]}`);
  fs.writeFileSync(path.join(process.env.BB_HOP_TIMES_DIR, `${process.pid}.hops`), lines.join('\n') + '\n');
});
