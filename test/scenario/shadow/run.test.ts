// A shadow run whose listener of a recording's facts throws: the client must
// not notice, and the errors the bus caught are reported once, at close, per
// target, as bb capture's are (scenario/record/recording.ts, STYLE principle 4).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from 'undici';
import { startShadow, type TargetName } from '../../../scenario/index.js';
import type { ListenerErrorReport } from '../../../proxy/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { startShadowService, type ShadowService } from './service.js';

const tmp = tempDir();
const services: ShadowService[] = [];
after(async () => {
  for (const s of services) await s.close();
});

describe('a shadow run whose tee throws', () => {
  it('keeps answering the client, and reports the errors by kind and target at close', async () => {
    const [primary, candidate] = [await startShadowService('old'), await startShadowService('old')];
    services.push(primary, candidate);
    const reports: Array<{ target: TargetName; report: ListenerErrorReport }> = [];
    // The seam: the tee reads `sample` from the options it was given as each exchange starts,
    // inside its listener on the primary's facts; a getter that throws makes that listener throw.
    let reads = 0;
    const shadow = await startShadow({
      primary: primary.url,
      candidate: candidate.url,
      outDir: tmp.path('thrown'),
      bbHome: tmp.bbHome,
      get sample(): number {
        reads++;
        throw new TypeError(reads === 3 ? 'third one' : 'tee bug');
      },
      onListenerErrors: (report, target) => reports.push({ target, report }),
    });
    const c = new Client(shadow.url);
    const answers: string[] = [];
    try {
      for (const path of ['/items', '/items', '/items']) {
        const res = await c.request({ method: 'GET', path });
        answers.push(`${res.statusCode} total ${(JSON.parse(await res.body.text()) as { total: number }).total}`);
      }
    } finally {
      await c.close();
    }
    assert.equal(reads, 3, 'the tee read the option once per request');
    assert.deepEqual(reports, [], 'nothing is reported before close');

    await shadow.close(1000);

    assert.deepEqual(
      reports.map(({ target, report }) => ({ target, count: report.count, kinds: report.kinds.map((k) => `${k.error.name}: ${k.error.message} x${k.times}`) })),
      [{ target: 'primary', count: 3, kinds: ['TypeError: tee bug x2', 'TypeError: third one x1'] }],
    );
    assert.deepEqual(answers, ['200 total 1', '200 total 1', '200 total 1'], 'the client got the primary\'s answers');
  });
});
