// The comparison gives way to the relay (scenario/shadow/low-priority.ts): on
// Linux every thread of the comparison process (V8's helper threads that run
// its garbage collection included) runs at the lowest priority, the relay's
// process at its own. Read from /proc, as `ps -L -o nice` would.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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

/** Each thread of a process: its id and niceness (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number | 'self'): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces: the fields after it are counted from its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

describe('bb shadow: the comparison process gives way to the relay', { skip: !linux && 'thread priorities are per thread on Linux only' }, () => {
  it('lowerProcessPriority lowers every thread of the calling process, threads started later too', async () => {
    const module = new URL('../../../scenario/shadow/low-priority.ts', import.meta.url).href;
    const source = `import(${JSON.stringify(module)}).then((m) => {
      const lowered = m.lowerProcessPriority(${COMPARE_NICE});
      // A thread started after it: a worker inherits its creator's niceness.
      new (require('node:worker_threads').Worker)('setTimeout(() => {}, 60000)', { eval: true }).on('online', () => process.send({ lowered }));
    });`;
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), '-e', source], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    try {
      const { lowered } = await new Promise<{ lowered: boolean }>((res, rej) => (child.once('message', res as never), child.once('error', rej)));
      assert.equal(lowered, true);
      const nices = [...threadNices(child.pid!).values()];
      assert.ok(nices.length > 2, `its threads: ${JSON.stringify(nices)}`);
      assert.deepEqual(nices.filter((n) => n !== COMPARE_NICE), [], 'every thread at the lowest priority');
      assert.deepEqual([...threadNices('self').values()].filter((n) => n !== 0), [], 'this process keeps its priority');
    } finally {
      child.kill();
    }
  });

  it('a shadow run compares in a process at the lowest priority while its relay keeps its own', async () => {
    const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
    services.push(primary, candidate);
    const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, outDir: tmp.path('nice'), bbHome: tmp.bbHome });
    try {
      // The comparison lowers itself as it starts: wait for its first report (it is running by then).
      while (!shadow.report()) await new Promise((r) => setTimeout(r, 20));
      const [self, compare] = shadow.processIds();
      assert.equal(self, process.pid);
      assert.ok(compare !== undefined && compare !== process.pid, 'a process of its own');
      const nices = [...threadNices(compare).values()];
      assert.deepEqual(nices.filter((n) => n !== COMPARE_NICE), [], `every thread of the comparison process at nice ${COMPARE_NICE}: ${JSON.stringify(nices)}`);
      assert.deepEqual([...threadNices('self').values()].filter((n) => n !== 0), [], 'every thread of the relay keeps its priority');
    } finally {
      await shadow.close();
    }
  });
});
