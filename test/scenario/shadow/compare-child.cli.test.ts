// The comparison process of a `bb shadow` run (scenario/shadow/compare-child.ts)
// with real processes: the real bb binary, its real child, real signals. A
// SIGKILLed bb leaves no orphan (the child exits when its IPC channel
// closes); a child that dies mid-run costs the live comparison only: the
// primary keeps answering, the captures are written whole, and the run says
// so in one line and exits 2.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { Client } from 'undici';
import { startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const linux = process.platform === 'linux';
const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

/** The child processes of `pid` (/proc/<pid>/task/<tid>/children, over its threads). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

/** Whether a process with this id is still there (and not a zombie waiting for its parent). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function until(what: string, test: () => boolean, timeoutMs = 20_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !test(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `bb shadow` of two old builds, running; its url and its comparison process's pid. */
async function shadow(name: string) {
  const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
  services.push(primary, candidate);
  const out = tmp.path(name);
  const bb = startBb(['shadow', '--primary', primary.url, '--candidate', candidate.url, '--out', out, '--quiet'], env, { timeoutMs: 90_000 });
  const [, url] = await bb.waitFor(/clients → (http:\/\/\S+)/, 20_000);
  let child = 0;
  await until('the comparison process', () => ((child = childrenOf(bb.child.pid!)[0] ?? 0), child > 0));
  return { bb, url: url!, out, child, primary };
}

async function gets(url: string, n: number): Promise<void> {
  const c = new Client(url);
  try {
    for (let i = 0; i < n; i++) {
      const res = await c.request({ method: 'GET', path: '/items' });
      assert.equal(res.statusCode, 200);
      await res.body.text();
    }
  } finally {
    await c.close();
  }
}

describe('bb shadow: the comparison process', { skip: !linux && 'finds the child through /proc' }, () => {
  it('exits when bb is SIGKILLed: no orphan', async () => {
    const { bb, url, child } = await shadow('killed');
    await gets(url, 3);
    assert.ok(alive(child), 'the comparison process runs beside bb');
    bb.child.kill('SIGKILL');
    await bb.exited;
    await until(`comparison process ${child} to exit after bb was SIGKILLed`, () => !alive(child));
  });

  it('dies mid-run: the primary keeps answering, the captures are written, one line and exit 2', async () => {
    const { bb, url, out, child, primary } = await shadow('child-dies');
    await gets(url, 3);
    process.kill(child, 'SIGKILL');
    await until('the comparison process to be gone', () => !alive(child));
    // The relay never depended on it.
    await gets(url, 4);
    bb.child.kill('SIGINT');
    const code = await bb.exited;
    assert.equal(code, 2, `exit 2\n${bb.stdout()}\n${bb.stderr()}`);
    // Besides the signal's own line, one line says what failed.
    const lines = bb.stderr().split('\n').filter((l) => l.startsWith('bb: ') && !l.startsWith('bb: SIGINT:'));
    assert.deepEqual(lines, ['bb: the live comparison failed: its process was killed by SIGKILL; the captures are still written, and bb diff compares them offline'], bb.stderr());
    // Everything recorded is there: the primary's 7 exchanges and the candidate's 7 mirrors.
    const entries = (side: string) => (JSON.parse(readFileSync(`${out}/${side}.har`, 'utf8')) as { log: { entries: unknown[] } }).log.entries.length;
    assert.equal(entries('primary'), 7);
    assert.equal(entries('candidate'), 7);
    assert.equal(primary.hits.get('GET /items'), 7);
  });
});
