// The watch of a shadow run's end (scenario/shadow/drain-watch.ts): a thread
// starved of CPU is seen as such. A worker at the lowest priority spins while
// more processes than cores spin at the process's priority; the watch must
// call back while they still run (what starves it), read from /proc.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { schedTimes, watchStarved } from '../../../scenario/shadow/drain-watch.js';

const spinners: ChildProcess[] = [];
after(() => {
  for (const p of spinners) p.kill();
});

describe('watchStarved', () => {
  it('sees a thread at the lowest priority starved while more processes than cores spin', { timeout: 60_000, skip: process.platform !== 'linux' && 'thread times from /proc: Linux only' }, async () => {
    const source = `
      const { parentPort } = require('node:worker_threads');
      const os = require('node:os');
      const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
      os.setPriority(tid, 19);
      parentPort.postMessage(tid);
      for (const end = Date.now() + 30000; Date.now() < end; );`;
    const worker = new Worker(source, { eval: true });
    try {
      const tid = await new Promise<number>((res, rej) => (worker.once('message', res), worker.once('error', rej)));
      assert.ok(schedTimes(tid), 'the thread\'s times are readable in /proc');
      const spin = 'for (const end = Date.now() + 20000; Date.now() < end; );';
      for (let i = 0; i <= availableParallelism(); i++) spinners.push(spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
      await new Promise<void>((resolve) => watchStarved(tid, resolve));
      // Seen while what starves it still runs (each spinner stops by itself after 20 s), and the thread with it.
      assert.deepEqual(spinners.map((p) => [p.exitCode, p.signalCode]), spinners.map(() => [null, null]), 'every spinner still running');
      assert.ok(schedTimes(tid), 'the starved thread still running');
    } finally {
      for (const p of spinners.splice(0)) p.kill();
      await worker.terminate();
    }
  });
});
