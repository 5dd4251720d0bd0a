// Ports for tests on loopback.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed). */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, '127.0.0.1', resolve);
  });
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
