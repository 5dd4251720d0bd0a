// An HTTP/1.1 and an HTTP/2 recording of the same exchange compare equal
// (docs/diff.md "HTTP/1.1 against HTTP/2"): Chrome's `http/2.0` with
// pseudo-headers in `headers`, mitmproxy's `HTTP/2.0` without them. The h2 side
// is the real export from ../shared/fixtures/har/, read in place; the h1 side
// is the same exchange written the way HTTP/1.1 carries it (Host instead of
// :authority, header names in their case, Connection and Keep-Alive).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Har, HarEntry, HarNameValue } from '../../../capture/har.js';
import { runBb } from '../../helpers/cli.js';
import { sharedFixture } from '../../helpers/fixtures.js';
import { tempDir } from '../../helpers/tmp.js';

async function fixture(name: string): Promise<Har> {
  return JSON.parse((await readFile(sharedFixture(undefined, name)!, 'utf8')).replace(/^\uFEFF/, '')) as Har;
}

const title = (name: string) => name.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase());

/** The same exchange as HTTP/1.1 would carry it. */
function asHttp1(e: HarEntry): HarEntry {
  const h1 = structuredClone(e);
  const url = new URL(e.request.url);
  const plain = (list: HarNameValue[]) => list.filter((h) => !h.name.startsWith(':')).map((h) => ({ name: title(h.name), value: h.value }));
  h1.request.httpVersion = 'HTTP/1.1';
  h1.response.httpVersion = 'HTTP/1.1';
  h1.request.headers = [{ name: 'Host', value: url.host }, ...plain(e.request.headers), { name: 'Connection', value: 'keep-alive' }];
  h1.response.headers = [...plain(e.response.headers), { name: 'Connection', value: 'keep-alive' }, { name: 'Keep-Alive', value: 'timeout=5' }];
  return h1;
}

function withEntries(har: Har, entries: HarEntry[]): Har {
  return { log: { ...har.log, entries } };
}

describe('HTTP/1.1 and HTTP/2 recordings of the same exchange', () => {
  const t = tempDir();
  async function diff(a: Har, b: Har): Promise<{ code: number; stdout: string }> {
    const n = `${Math.random()}`;
    const r = await runBb(['diff', await t.write(`${n}-h1.har`, a), await t.write(`${n}-h2.har`, b)], { NO_COLOR: '1' });
    return { code: r.code, stdout: r.stdout + r.stderr };
  }

  for (const [name, style] of [['postdata.har', "Chrome's http/2.0 with pseudo-headers"], ['mitmproxy-export.har', "mitmproxy's HTTP/2.0 without them"]] as const) {
    it(`${style} (${name}) matches its HTTP/1.1 twin, and a real difference still shows`, async (t2) => {
      if (!sharedFixture(t2)) return;
      const h2 = await fixture(name);
      const h1 = withEntries(h2, h2.log.entries.map(asHttp1));
      const same = await diff(h1, h2);
      assert.equal(same.code, 0, same.stdout);
      assert.match(same.stdout, /^MATCH/, same.stdout);

      const changed = structuredClone(h2);
      changed.log.entries[0]!.response.headers.push({ name: 'x-new', value: '1' });
      const real = await diff(h1, changed);
      assert.equal(real.code, 1, real.stdout);
      assert.match(real.stdout, /response\.headers\.x-new/, real.stdout);
    });
  }

  it('connection-specific headers still count between two HTTP/1.1 recordings', async (t2) => {
    if (!sharedFixture(t2)) return;
    const h2 = await fixture('postdata.har');
    const a = withEntries(h2, h2.log.entries.map(asHttp1));
    const b = structuredClone(a);
    b.log.entries[0]!.response.headers.push({ name: 'Transfer-Encoding', value: 'chunked' });
    const r = await diff(a, b);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /response\.headers\.transfer-encoding/, r.stdout);
  });
});
