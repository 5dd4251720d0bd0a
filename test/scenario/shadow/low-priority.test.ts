// The comparison worker gives way to the relay (scenario/shadow/low-priority.ts):
// on Linux it runs at the lowest priority, the relay's thread (the process)
// at its own. Read from /proc, as `ps -L -o nice` would.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { spawnSync } from 'node:child_process';
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

/** Each thread of this process: its id and a field of /proc/self/task/<tid>/stat (19: niceness, 41: scheduling policy). */
function threadStat(field: number): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces: the fields after it (the third on) are counted from its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    values.set(Number(tid), Number(fields[field - 3]));
  }
  return values;
}
const threadNices = (): Map<number, number> => threadStat(19);
const threadPolicies = (): Map<number, number> => threadStat(41);
/** SCHED_IDLE's number (linux/sched.h); SCHED_OTHER is 0. */
const SCHED_IDLE = 5;
/** Whether util-linux's chrt is here (the worker stays at nice 19 alone without it). */
const chrt = spawnSync('chrt', ['--version']).status === 0;

/** Calls low-priority.ts's `call` (e.g. "idleThreadPolicy()") in a worker thread of its own, which stays until finish(): what it returned, and the thread's id. */
async function inThread(call: string): Promise<{ done: boolean; tid: number; finish: () => Promise<number> }> {
  const source = `
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(new URL('../../../scenario/shadow/low-priority.ts', import.meta.url).href)}).then((m) => {
      const done = m.${call};
      const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
      parentPort.postMessage({ done, tid });
    });`;
  const api = import.meta.resolve('tsx/esm/api');
  const worker = new Worker(`import(${JSON.stringify(api)}).then((t) => { t.register(); ${source} });`, { eval: true });
  try {
    const { done, tid } = await new Promise<{ done: boolean; tid: number }>((res, rej) => (worker.once('message', res), worker.once('error', rej)));
    return { done, tid, finish: () => worker.terminate() };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
}

describe('bb shadow: the comparison worker gives way to the relay', { skip: !linux && 'thread priorities are per thread on Linux only' }, () => {
  it('lowerThreadPriority lowers the calling thread alone', async () => {
    const { done, tid, finish } = await inThread(`lowerThreadPriority(${COMPARE_NICE})`);
    try {
      assert.equal(done, true);
      assert.equal(threadNices().get(tid), COMPARE_NICE);
      assert.equal(getPriority(process.pid), 0, 'the main thread keeps its priority');
    } finally {
      await finish();
    }
  });

  it('idleThreadPolicy puts the calling thread alone under SCHED_IDLE', { skip: !chrt && 'no chrt here' }, async () => {
    const { done, tid, finish } = await inThread('idleThreadPolicy()');
    try {
      assert.equal(done, true);
      assert.equal(threadPolicies().get(tid), SCHED_IDLE);
      assert.equal(threadPolicies().get(process.pid), 0, 'the main thread keeps SCHED_OTHER');
    } finally {
      await finish();
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
      if (chrt) assert.equal(threadPolicies().get(lowered[0]![0]), SCHED_IDLE, 'the worker runs under SCHED_IDLE');
      assert.equal(threadPolicies().get(process.pid), 0, 'the relay keeps SCHED_OTHER');
    } finally {
      await shadow.close();
    }
  });
});
