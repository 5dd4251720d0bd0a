// bb replay of a server-rendered app (test/helpers/orders-html.ts): the
// values a browser sends back come from the pages themselves (a CSRF token
// in a hidden input, a version token in a link), not from JSON or headers.
// The replay must send the target's own (diff/bind/html.ts reads them), or
// every form post is refused (422) and the link is not found (404).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startRecording } from '../../../scenario/index.js';
import { runBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { startOrdersApp, visitOrders, type OrdersApp } from '../../helpers/orders-html.js';

const tmp = tempDir();
const env = { BB_HOME: tmp.bbHome };
const apps: OrdersApp[] = [];
after(async () => {
  for (const a of apps) await a.close();
});
const app = async (firstId: number): Promise<OrdersApp> => {
  const a = await startOrdersApp(firstId);
  apps.push(a);
  return a;
};

describe('bb replay: values an HTML page issued', () => {
  it("sends the target's own CSRF token and link token back: no post refused, no link lost; bb diff of the two captures is MATCH", async () => {
    const original = await app(1000);
    const rec = await startRecording({ target: original.url, out: tmp.path('orders.har'), label: 'orders', bbHome: tmp.bbHome, listen: { host: '127.0.0.1', port: 0 } });
    try {
      assert.match(await visitOrders(rec.url, 'widget'), /Cancelled/);
    } finally {
      await rec.close(1000);
    }
    assert.equal(original.refused(), 0);

    const fresh = await app(5000);
    const out = tmp.path('orders-replay.har');
    const json = tmp.path('orders-replay.json');
    const run = await runBb(['replay', rec.out, '--target', fresh.url, '--out', out, '--json', json], env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.deepEqual(fresh.log, ['GET /orders/new 200', 'POST /orders 303', 'GET /orders/5000 200', 'GET /orders/5000/edit 200', 'POST /orders/5000/cancel 303', 'GET /orders/5000 200']);
    const report = JSON.parse(await readFile(json, 'utf8')) as { rewritten: Array<{ from: { path: string }; uses: number }> };
    const places = report.rewritten.map((r) => r.from.path);
    assert.ok(places.some((p) => p.startsWith('html:input[authenticity_token]') || p.startsWith('html:meta[csrf-token]')), places.join(' '));
    assert.ok(places.includes('html:a#0@href~3'), places.join(' '));
    const diff = await runBb(['diff', rec.out, out], env);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /^MATCH/);
  });
});
