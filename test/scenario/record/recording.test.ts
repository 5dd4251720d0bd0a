// A recording proxy whose facts have an observer that throws: the proxied
// connection must not notice, the capture stays whole, and the errors the
// bus caught are reported once, when the recording closes (STYLE principle 4).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startRecording } from '../../../scenario/index.js';
import type { ListenerErrorReport } from '../../../proxy/index.js';
import type { Har } from '../../../capture/index.js';
import { closeHttpAndWs, helloServer } from '../../helpers/servers.js';
import { tempDir } from '../../helpers/tmp.js';

describe('a recording whose fact listener throws', () => {
  it('keeps serving and recording, and reports the errors by kind at close', async () => {
    const tmp = tempDir();
    const upstream = await helloServer();
    after(() => closeHttpAndWs(upstream.server));
    const reports: ListenerErrorReport[] = [];
    const rec = await startRecording({
      target: `http://127.0.0.1:${upstream.port}`,
      out: tmp.path('thrown.har'),
      bbHome: tmp.bbHome,
      onListenerErrors: (report) => reports.push(report),
    });
    // Throws on every completed exchange: twice with one message, once with another.
    let completed = 0;
    rec.proxy.bus.on((fact) => {
      if (fact.type !== 'exchange-completed') return;
      completed++;
      throw new TypeError(completed === 3 ? 'third one' : 'observer bug');
    });
    const bodies: string[] = [];
    for (const path of ['/a', '/b', '/c']) {
      const res = await fetch(`${rec.url}${path}`);
      bodies.push(`${res.status} ${await res.text()}`);
    }
    assert.deepEqual(bodies, ['200 hello from /a', '200 hello from /b', '200 hello from /c']);
    assert.deepEqual(reports, [], 'nothing is reported before close');

    const out = await rec.close(1000);

    assert.equal(reports.length, 1, 'one report, at close');
    const [report] = reports;
    assert.equal(report.count, 3);
    assert.deepEqual(
      report.kinds.map((k) => `${k.error.name}: ${k.error.message} x${k.times}`),
      ['TypeError: observer bug x2', 'TypeError: third one x1'],
    );
    const har = JSON.parse(await readFile(out, 'utf8')) as Har;
    assert.deepEqual(har.log.entries.map((e) => `${e.request.url.replace(/^http:\/\/[^/]+/, '')} ${e.response.status}`), ['/a 200', '/b 200', '/c 200']);
  });
});
