// A port nothing listens on: bound, then freed, on 127.0.0.3. The suite's
// servers bind 127.0.0.1, so one that gets the same port number meanwhile
// does not answer there (on 127.0.0.1 that race once gave BB_UPSTREAM_CLOSED
// where ECONNREFUSED was meant).
import net from 'node:net';
import { once } from 'node:events';

/** Host of freedPort(). */
export const FREED_HOST = '127.0.0.3';

/** A port on FREED_HOST that was just free; connecting to it is refused. */
export async function freedPort(): Promise<number> {
  const probe = net.createServer();
  probe.listen(0, FREED_HOST);
  await once(probe, 'listening');
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}
