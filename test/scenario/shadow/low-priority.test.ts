// The comparison worker gives way to the relay (scenario/shadow/low-priority.ts):
// on Linux it runs at the lowest priority, the relay's thread (the process)
// at its own. Read from /proc, as `ps -L -o nice` would.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { startShadow } from '../../../scenario/index.js';
import { COMPARE_NICE } from '../../../scenario/shadow/low-priority.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const linux = process.platform === 'linux';
const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** Each thread of this process: its id and niceness (field 19 of /proc/self/task/<tid>/stat). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces: the fields after it are counted from its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

describe('bb shadow: the comparison worker gives way to the relay', { skip: !linux && 'thread priorities are per thread on Linux only' }, () => {
  it('lowerThreadPriority lowers the calling thread alone', async () => {
    const source = `
      const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(new URL('../../../scenario/shadow/low-priority.ts', import.meta.url).href)}).then((m) => {
        const lowered = m.lowerThreadPriority(${COMPARE_NICE});
        const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
        parentPort.postMessage({ lowered, tid });
      });
      // Alive until terminated: a worker with nothing left to do exits, and its thread leaves /proc/self/task before it is read.
      setInterval(() => {}, 60_000);`;
    const api = import.meta.resolve('tsx/esm/api');
    const worker = new Worker(`import(${JSON.stringify(api)}).then((t) => { t.register(); ${source} });`, { eval: true });
    try {
      const { lowered, tid } = await new Promise<{ lowered: boolean; tid: number }>((res, rej) => (worker.once('message', res), worker.once('error', rej)));
      assert.equal(lowered, true);
      assert.equal(threadNices().get(tid), COMPARE_NICE);
      assert.equal(getPriority(process.pid), 0, 'the main thread keeps its priority');
    } finally {
      await worker.terminate();
    }
  });

  it('a shadow run compares at the lowest priority while its relay keeps the process priority', async () => {
    const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
    services.push(primary, candidate);
    const before = new Set(threadNices().keys());
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('nice'), bbHome: tmp.bbHome });
    try {
      // The worker lowers itself as it starts: wait for its first report (it is running by then).
      while (!shadow.report()) await new Promise((r) => setTimeout(r, 20));
      const lowered = [...threadNices()].filter(([tid, nice]) => !before.has(tid) && nice === COMPARE_NICE);
      assert.equal(lowered.length, 1, `one new thread at nice ${COMPARE_NICE}: ${JSON.stringify([...threadNices()])}`);
      assert.equal(threadNices().get(process.pid), 0, 'the relay (main thread) keeps its priority');
    } finally {
      await shadow.close();
    }
  });
});
