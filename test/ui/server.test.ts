// The live view's server on a real loopback port, asked with undici: its page
// and assets under a strict CSP, feeds as server-sent events (what is known at
// once, then what happens), and the admin endpoint's rule against web pages:
// a foreign Host or Origin gets 403 before any route.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startUi, checkUiAddress, type UiServer } from '../../ui/index.js';
import { BbError } from '../../core/index.js';
import type { UiEvent, UiFeed } from '../../ui/server.js';

/** A feed that sends 'hello' at once and whatever `emit` is given later; key "nothing" names nothing. */
function testFeed(): UiFeed & { emit(event: UiEvent): void; open: UiFeed['open']; subscribers(): number } {
  const sends = new Set<(e: UiEvent) => void>();
  return {
    name: 'things',
    open(key, send) {
      if (key === 'nothing') return undefined;
      send({ type: 'hello', key: key ?? null });
      sends.add(send);
      return () => sends.delete(send);
    },
    emit: (event) => sends.forEach((send) => send(event)),
    subscribers: () => sends.size,
  };
}

/** Reads a feed's events until `count` came. */
async function events(url: string, count: number, then?: () => void): Promise<UiEvent[]> {
  const res = await request(url);
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/event-stream/);
  const got: UiEvent[] = [];
  let text = '';
  for await (const chunk of res.body) {
    text += String(chunk);
    for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const data = block.split('\n').find((l) => l.startsWith('data: '));
      if (data) got.push(JSON.parse(data.slice(6)));
      if (got.length === 1) then?.();
      if (got.length === count) {
        res.body.destroy();
        return got;
      }
    }
  }
  return got;
}

describe('the live view server', () => {
  let ui: UiServer;
  const ran: unknown[] = [];
  const feed = testFeed();
  before(async () => {
    ui = await startUi({
      title: 'bb test',
      views: [{ name: 'capture', title: 'Exchanges' }],
      feeds: [feed],
      actions: [{
        name: 'echo',
        run: async (body) => {
          if ((body as { fail?: boolean }).fail) throw new BbError('BB_USAGE', 'the page asked for a failure');
          ran.push(body);
          return { got: body };
        },
      }],
    });
  });
  after(() => ui.close());

  it('serves the page, its script and style and the registered view under a CSP that runs only its own scripts', async () => {
    assert.match(ui.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const [path, type] of [['', 'text/html'], ['app.js', 'text/javascript'], ['shared.js', 'text/javascript'], ['app.css', 'text/css'], ['views/capture.js', 'text/javascript']]) {
      const res = await request(ui.url + path);
      assert.equal(res.statusCode, 200, path);
      assert.match(String(res.headers['content-type']), new RegExp(`^${type}`), path);
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /img-src data:(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      await res.body.text();
    }
    const views = await request(ui.url + 'api/views');
    // The run's token rides along: only a page of this origin can read it (actions need it).
    const { token, ...rest } = (await views.body.json()) as { token: string };
    assert.deepEqual(rest, { title: 'bb test', views: [{ name: 'capture', title: 'Exchanges' }] });
    assert.equal(typeof token, 'string');
  });

  it('the page loads no script but its own files, and none inline', async () => {
    const html = await (await request(ui.url)).body.text();
    assert.deepEqual([...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!.trim()), ['src="frames-search.js" defer', 'src="shared.js" defer', 'src="app.js" defer']);
    assert.doesNotMatch(html, /https?:\/\//);
  });

  it('answers 404 for any other path, a feed it does not have, or a key its feed does not know', async () => {
    for (const path of ['nope', 'views/other.js', '../package.json', 'feed/other', 'feed/things?key=nothing']) {
      const res = await request(ui.url + path);
      assert.equal(res.statusCode, 404, path);
      await res.body.text();
    }
  });

  it('streams a feed: what it knows at once, then each event, and stops the subscriber when the page goes', async () => {
    const got = await events(`${ui.url}feed/things?key=k1`, 3, () => {
      feed.emit({ type: 'row', n: 1 });
      feed.emit({ type: 'row', n: 2, text: 'two\nlines </script>' });
    });
    assert.deepEqual(got, [{ type: 'hello', key: 'k1' }, { type: 'row', n: 1 }, { type: 'row', n: 2, text: 'two\nlines </script>' }]);
    for (let i = 0; i < 50 && feed.subscribers() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(feed.subscribers(), 0);
  });

  it('refuses requests from web pages (foreign Host or Origin) with 403, as the admin endpoint does', async () => {
    const port = new URL(ui.url).port;
    const foreign: Array<Record<string, string>> = [
      { host: 'evil.example' },
      { host: `rebound.example:${port}` },
      { host: `127.0.0.1:${port}`, origin: 'http://evil.example' },
      { host: `127.0.0.1:${port}`, origin: 'null' },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${Number(port) + 1}` },
    ];
    for (const headers of foreign) {
      for (const path of ['', 'feed/things', 'api/views']) {
        const res = await request(ui.url + path, { headers });
        assert.equal(res.statusCode, 403, `${JSON.stringify(headers)} ${path}`);
        assert.match(await res.body.text(), /^refused: /);
      }
    }
    const own = await request(ui.url, { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` } });
    assert.equal(own.statusCode, 200);
    await own.body.text();
  });

  it('answers GET only, and POST to its actions', async () => {
    const res = await request(ui.url + 'api/views', { method: 'POST', body: '{}' });
    assert.equal(res.statusCode, 405);
    await res.body.text();
  });

  it("runs an action only with the run's token and a JSON body; a foreign Origin is refused first", async () => {
    const { token } = (await (await request(ui.url + 'api/views')).body.json()) as { token: string };
    assert.match(token, /^[A-Za-z0-9_-]{24}$/);
    const port = new URL(ui.url).port;
    const post = async (headers: Record<string, string>, body = '{"n":1}') => {
      const res = await request(ui.url + 'action/echo', { method: 'POST', body, headers });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    const json = { 'content-type': 'application/json' };
    assert.deepEqual(await post({ ...json, 'x-bb-token': token, origin: `http://127.0.0.1:${port}` }), { status: 200, body: { got: { n: 1 } } });
    assert.equal((await post({ ...json })).status, 403);
    assert.equal((await post({ ...json, 'x-bb-token': 'guess' })).status, 403);
    const foreign = await request(ui.url + 'action/echo', { method: 'POST', body: '{"n":2}', headers: { ...json, 'x-bb-token': token, origin: 'http://evil.example' } });
    assert.equal(foreign.statusCode, 403);
    await foreign.body.text();
    assert.equal((await post({ 'content-type': 'text/plain', 'x-bb-token': token })).status, 415);
    assert.equal((await post({ ...json, 'x-bb-token': token }, 'not json')).status, 400);
    assert.deepEqual(await post({ ...json, 'x-bb-token': token }, '{"fail":true}'), { status: 400, body: { error: 'the page asked for a failure', code: 'BB_USAGE' } });
    assert.deepEqual(ran, [{ n: 1 }]);
  });

  it('refuses an address other machines could reach, before listening', async () => {
    assert.throws(() => checkUiAddress('0.0.0.0'), { code: 'BB_UI_NOT_LOOPBACK' });
    await assert.rejects(startUi({ listen: { host: '192.168.1.2', port: 0 }, title: 't', views: [], feeds: [] }), { code: 'BB_UI_NOT_LOOPBACK' });
  });

  it('says so when its port is taken', async () => {
    const port = Number(new URL(ui.url).port);
    await assert.rejects(startUi({ listen: { host: '127.0.0.1', port }, title: 't', views: [], feeds: [] }), { code: 'BB_UI_LISTEN', message: /in use/ });
  });
});
