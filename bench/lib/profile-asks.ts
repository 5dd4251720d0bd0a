// The 'profile-start' / 'profile-stop <file>' asks of a measured helper
// process (proxy-peer.ts, shadow-peer.ts): a CPU profile of its main thread
// over just the traffic in between, through node:inspector, written as a
// .cpuprofile. Imports nothing but Node, as serve.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import { dirname } from 'node:path';

const session = new inspector.Session();
const post = (method: string, params?: object): Promise<unknown> =>
  new Promise((resolve, reject) => session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));

/** Answers a profile ask (resolves to true, or to the file written), or returns undefined when `what` is another ask. */
export function profileAsk(what: string): Promise<unknown> | undefined {
  if (what === 'profile-start') {
    return (async () => {
      session.connect();
      await post('Profiler.enable');
      // 100 µs sampling: fine enough for per-request work.
      await post('Profiler.setSamplingInterval', { interval: 100 });
      await post('Profiler.start');
      return true;
    })();
  }
  if (what.startsWith('profile-stop ')) {
    const file = what.slice('profile-stop '.length);
    return (async () => {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      session.disconnect();
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      return file;
    })();
  }
  return undefined;
}
