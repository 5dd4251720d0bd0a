// bb diff over captures in memory (diffHars, what bb shadow's live batches
// use): the same result as diffCaptures of the same captures written to
// files, noise run included; the names stand where the paths would.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { diffCaptures, diffHars } from '../../diff/index.js';
import type { Har } from '../../capture/har.js';
import { capture, uuid, type ExchangeSpec } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();

/** A small service's traffic: a random id, a field that may change, a WebSocket conversation. */
function traffic(total: number, room: string): ExchangeSpec[] {
  const id = uuid();
  return [
    { method: 'POST', url: 'http://127.0.0.1:7001/items', body: { id } },
    { url: `http://127.0.0.1:7001/items/${id}`, body: { id, total } },
    { url: 'http://127.0.0.1:7001/ws', ws: Array.from({ length: 100 }, (_, i) => ({ type: i % 2 ? ('receive' as const) : ('send' as const), data: { n: i, room } })) },
  ];
}

describe('diffHars', () => {
  it('finds what diffCaptures finds in the same captures as files, noise included', async () => {
    const hars: Record<string, Har> = { primary: capture(traffic(3, 'lobby')), candidate: capture(traffic(4, 'lobby-2')), secondary: capture(traffic(5, 'lobby')) };
    const files = Object.fromEntries(Object.entries(hars).map(([name, har]) => {
      const path = tmp.path(`${name}.har`);
      writeFileSync(path, JSON.stringify(har));
      return [name, path];
    }));
    const offline = await diffCaptures(files.primary!, files.candidate!, { noisePath: files.secondary!, workers: false });
    const live = await diffHars({ name: files.primary!, har: hars.primary! }, { name: files.candidate!, har: hars.candidate! }, { noise: { name: files.secondary!, har: hars.secondary! }, workers: false });
    assert.equal(offline.verdict, 'diff');
    assert.deepEqual(live, offline);
    assert.ok(live.findings.some((f) => f.class === 'noise' && f.pattern.includes('total')), JSON.stringify(live.findings));
    assert.ok(live.findings.some((f) => f.class === 'real' && f.pattern.includes('room')), JSON.stringify(live.findings));
  });

  it('needs a name for each capture', async () => {
    const har = capture(traffic(1, 'a'));
    await assert.rejects(diffHars({ name: 'x', har }, { name: 'x', har }), /its own name/);
  });
});
