// framesHtml (the page of `bb frames --html`) on a hostile capture, and the
// page and --page through the real CLI.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Har } from '../../capture/har.js';
import { framesDiagram, framesHtml } from '../../inspect/index.js';
import { runBb } from '../helpers/cli.js';
import { har, wsEntry, type Msg } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { bbHar, t0 } from './frames-hars.js';

/** bb run to its end at the width the expected lines are laid out for. */
const bb = (args: string[], env: NodeJS.ProcessEnv = {}) => runBb(args, { COLUMNS: '100', ...env });

describe('framesHtml', () => {
  const hostile = `</script><img src=x onerror="alert(1)"><!--<script>`;
  const evil = har([
    wsEntry(`ws://x.test/</script><b>`, '2024-05-01T10:00:00.000Z', [
      { type: 'send', time: t0, opcode: 1, data: hostile, _bb: { seq: 2, page: 'p' } },
      { type: 'receive', time: t0 + 1, opcode: 1, data: '\u2028&amp;', _bb: { seq: 3, page: 'p' } },
    ], { connection: '"><svg onload=alert(1)>', _bb: { seq: 1 } }),
  ], { pages: [{ id: 'p', title: '</style><script>alert(2)</script>', startedDateTime: '2024-05-01T10:00:00.000Z', pageTimings: {} }] });

  it('keeps captured strings out of markup: JSON blocks with < > & and U+2028 escaped, a nonce on the only script', () => {
    const html = framesHtml(framesDiagram(evil as Har), { title: 'bb frames <evil>.har', filters: '--grep <x>' });
    const nonce = /script-src 'nonce-([^']+)'/.exec(html)?.[1];
    assert.ok(nonce);
    assert.match(html, /default-src 'none'/);
    assert.equal(html.match(/<script/g)!.length, 3);
    assert.equal(html.match(new RegExp(`<script nonce="${nonce.replace(/[+/=]/g, '\\$&')}">`, 'g'))!.length, 1);
    assert.equal(html.match(/<\/script>/g)!.length, 3, 'no captured </script> closes an element');
    for (const raw of ['<img', '<svg', '<b>', '<!--', '\u2028', 'alert(2)</']) assert.ok(!html.includes(raw), raw);
    assert.ok(html.includes('<title>bb frames &lt;evil&gt;.har</title>'));
    assert.ok(html.includes('--grep &lt;x&gt;'));
    const block = /<script type="application\/json" id="bb-payloads">([^<]*)<\/script>/.exec(html)![1]!;
    assert.equal(JSON.parse(block)[0][1], hostile, 'the payload survives whole');
  });

  it('writes the page to stdout with --html -, and refuses --html with --json', async (t) => {
    const files = tempDir(t);
    const path = await files.write('bb.har', bbHar);
    const run = await bb(['frames', path, '--html', '-', '--page', 'chat']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^<!doctype html>/);
    assert.match(run.stdout, /3 rows · 1 of 1 WebSocket connection · --page chat/);
    const both = await bb(['frames', path, '--html', '-', '--json']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--html draws a finished capture as a page: drop --json/);
    const none = await bb(['frames', path, '--html', '-', '--grep', 'nothing-like-this']);
    assert.equal(none.code, 0);
    assert.match(none.stderr, /nothing to draw: no messages match/);
  });

  it('--page filters the text view too', async (t) => {
    const files = tempDir(t);
    const path = await files.write('bb.har', bbHar);
    const json = JSON.parse((await bb(['frames', path, '--json', '--page', 'sign in'])).stdout) as { connections: Array<{ messages: Msg[] }> };
    assert.deepEqual(json.connections.map((c) => c.messages.map((m) => m.data)), [['first']]);
    const tl = JSON.parse((await bb(['frames', path, '--timeline', '--json', '--page', 'chat'])).stdout) as { events: Array<{ kind: string; seq?: number }> };
    assert.deepEqual(tl.events.map((e) => e.kind), ['request', 'ws', 'response', 'ws', 'ws']);
  });
});
