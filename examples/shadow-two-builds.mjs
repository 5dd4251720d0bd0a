// Shadow live traffic: the old build answers, the new one gets a copy of
// each safe request, a second old instance tells noise from regressions.
// Run it: node examples/shadow-two-builds.mjs   (after npm ci)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startShadow } from 'bb';

// One build of a service: random ids, and a price the new build rounds.
function startService(build) {
  const server = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ id: randomUUID(), path: req.url, price: build === 'new' ? 10 : 9.99 }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

const [primary, candidate, secondary] = await Promise.all([startService('old'), startService('new'), startService('old')]);
const outDir = join(tmpdir(), `bb-shadow-example-${process.pid}`);
const shadow = await startShadow({ primary: primary.url, candidate: candidate.url, secondary: secondary.url, outDir });
for (const path of ['/products/1', '/products/2', '/cart']) await fetch(shadow.url + path).then((r) => r.json());
await fetch(shadow.url + '/orders', { method: 'POST' }).then((r) => r.json()); // answered by the primary only
const report = await shadow.close();
console.log(`${report.totals.requests} requests, ${report.totals.mirrored} mirrored, ${report.totals.regressions} with regressions, skipped ${JSON.stringify(report.totals.skipped)}`);
for (const f of report.findings) console.log(`${f.class} ${f.pattern} ${f.kind} in ${f.count}: ${f.samples[0].primary} → ${f.samples[0].candidate}`);
// 4 requests, 3 mirrored, 3 with regressions, skipped {"unsafe":1}
// regression response.body.price changed in 3: 9.99 → 10
for (const s of [primary, candidate, secondary]) s.server.close();
await rm(outDir, { recursive: true, force: true });
