// Turn a capture into the other side of a comparison: record a client against
// one server, replay it against a fresh one (which makes up other ids), then
// diff the two captures. Run it: node examples/replay-a-capture.mjs   (after npm ci)
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCapture, replayCapture, diffCaptures, loadDiffConfig, renderText } from 'bb';

// A service that issues a random id per created note.
function startService() {
  const notes = new Map();
  const server = http.createServer((req, res) => {
    const id = req.url.split('/')[2];
    res.setHeader('Content-Type', 'application/json');
    if (req.method === 'POST') {
      const note = { id: `note_${randomUUID()}`, text: 'hello' };
      notes.set(note.id, note);
      res.statusCode = 201;
      return res.end(JSON.stringify(note));
    }
    res.statusCode = notes.has(id) ? 200 : 404;
    res.end(JSON.stringify(notes.get(id) ?? { error: 'no such note' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

const dir = tmpdir();
const first = await startService();
const cap = await startCapture({ target: first.url, label: 'original', out: join(dir, `bb-replay-example-old-${process.pid}.har`) });
const created = await fetch(`${cap.url}/notes`, { method: 'POST' }).then((r) => r.json());
await fetch(`${cap.url}/notes/${created.id}`).then((r) => r.json());
const oldHar = await cap.close();

// A fresh instance: its ids are new, and the replay follows them.
const second = await startService();
const summary = await replayCapture(oldHar, { target: second.url, out: join(dir, `bb-replay-example-new-${process.pid}.har`), force: true });
console.log(summary.line); // replayed 2 exchanges and 0 WebSocket messages to http://127.0.0.1:…, 1 values rewritten → …
console.log(summary.rewritten); // [ { from: { entry: '#1', path: 'body:$.id~0' }, uses: 1 } ]

// The ids differ by construction: number them, then the two runs match.
const config = join(dir, `bb-replay-example-${process.pid}.json`);
await writeFile(config, JSON.stringify({ normalize: { patterns: [{ name: 'note-ids', regex: 'note_[0-9a-f-]{36}', ordinal: 'NOTE' }] } }));
const result = await diffCaptures(oldHar, summary.out, { config: await loadDiffConfig(config) });
console.log(renderText(result, { color: false }).split('\n')[0]); // MATCH  (2 pairs; …)
first.server.close();
second.server.close();
for (const file of [oldHar, summary.out, config]) await rm(file, { force: true });
