// Record a test suite's own traffic with bb, then read the HAR it wrote.
// Run it: node examples/record-in-a-test.mjs   (after npm ci)
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCapture } from 'bb';

// The server under test (yours would already be running somewhere).
const server = http.createServer((req, res) => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ path: req.url, at: new Date().toISOString() }));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const target = `http://127.0.0.1:${server.address().port}`;

// One recording proxy in front of it; point the tests at cap.url.
const cap = await startCapture({ target, label: 'example', out: join(tmpdir(), `bb-example-${process.pid}.har`) });
cap.step('list items');
await fetch(`${cap.url}/v1/items?token=secret-value`).then((r) => r.json());
cap.step('get one');
await fetch(`${cap.url}/v1/items/1`).then((r) => r.json());
console.log(cap.stats()); // { entries: 2, ... }

const harPath = await cap.close(); // in-flight exchanges finish, the HAR is written atomically
server.close();
const har = JSON.parse(await readFile(harPath, 'utf8'));
for (const entry of har.log.entries) console.log(entry.pageref, entry.request.method, entry.request.url, entry.response.status);
console.log(`wrote ${harPath}`);
