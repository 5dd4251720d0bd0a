import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { diffCaptures, renderJunit, validateDiffConfig, type DiffResult } from '../../../diff/index.js';
import { findingLine } from '../../../diff/report/text.js';
import { xmlEscape } from '../../../diff/report/junit.js';
import { capture } from '../../helpers/har.js';
import { startBb } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';

/** A parsed XML element. */
interface El {
  name: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(s: string, where: string): string {
  assert.ok(!/[<]/.test(s), `raw < in ${where}: ${s}`);
  return s.replace(/&([a-z]+|#\d+|#x[0-9a-f]+);|&/gi, (m, e: string | undefined) => {
    assert.ok(e, `bare & in ${where}: ${s}`);
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    assert.ok(e in ENTITIES, `unknown entity &${e}; in ${where}`);
    return ENTITIES[e]!;
  });
}

/** A strict little XML parser: one root, balanced tags, quoted attributes, no raw < or bare & in text. */
function parseXml(xml: string): El {
  assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/);
  let rest = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const root: El = { name: '#doc', attrs: {}, children: [], text: '' };
  const stack: El[] = [root];
  const TAG = /^<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>/;
  while (rest.length) {
    const lt = rest.indexOf('<');
    const text = lt < 0 ? rest : rest.slice(0, lt);
    if (text) stack.at(-1)!.text += decode(text, stack.at(-1)!.name);
    if (lt < 0) break;
    rest = rest.slice(lt);
    const m = rest.match(TAG);
    assert.ok(m, `malformed tag at: ${rest.slice(0, 60)}`);
    const [whole, close, name, attrText, selfClose] = m;
    rest = rest.slice(whole.length);
    if (close) {
      const open = stack.pop()!;
      assert.equal(open.name, name, `</${name}> closes <${open.name}>`);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText!.matchAll(/([A-Za-z_][\w.-]*)="([^"]*)"/g)) {
      assert.ok(!(a[1]! in attrs), `duplicate attribute ${a[1]}`);
      attrs[a[1]!] = decode(a[2]!, `${name}@${a[1]}`);
    }
    const el: El = { name: name!, attrs, children: [], text: '' };
    stack.at(-1)!.children.push(el);
    if (!selfClose) stack.push(el);
  }
  assert.equal(stack.length, 1, `unclosed <${stack.at(-1)!.name}>`);
  assert.equal(root.children.length, 1, 'one root element');
  assert.equal(root.text.trim(), '');
  return root.children[0]!;
}

const HOSTILE = '</failure><testcase name="x"> & ]]> \u0001 \uFFFE "quoted" \'single\' \uD800';

describe('JUnit report', () => {

  async function result(): Promise<{ result: DiffResult; dir: string }> {
    const dir = tempDir();
    const a = capture([
      { url: 'http://127.0.0.1:3001/same', body: { ok: true } },
      { url: 'http://127.0.0.1:3001/real', body: { v: 1, note: 'a' } },
      { url: 'http://127.0.0.1:3001/known', body: { build: 'old' } },
      { url: 'http://127.0.0.1:3001/noise', body: { jitter: 1 } },
      { url: `http://127.0.0.1:3001/${encodeURIComponent('<x>&"')}`, body: { s: 'plain' } },
      { url: 'http://127.0.0.1:3001/gone', body: {} },
    ]);
    const b = capture([
      { url: 'http://127.0.0.1:3001/same', body: { ok: true } },
      { url: 'http://127.0.0.1:3001/real', body: { v: 2, note: 'b' } },
      { url: 'http://127.0.0.1:3001/known', body: { build: 'new' } },
      { url: 'http://127.0.0.1:3001/noise', body: { jitter: 2 } },
      { url: `http://127.0.0.1:3001/${encodeURIComponent('<x>&"')}`, body: { s: HOSTILE } },
      { url: 'http://127.0.0.1:3001/added', body: {} },
    ]);
    // A second run of the old build where only the jitter differs: noise. The build name: a known entry.
    const a2 = structuredClone(a);
    a2.log.entries[3]!.response.content.text = JSON.stringify({ jitter: 3 });
    const config = validateDiffConfig({ known: [{ where: '*/GET /known#*', path: 'response.body.build', reason: 'build name is in the body' }] });
    const r = await diffCaptures(await dir.write('old.har', a), await dir.write('new.har', b), { config, noisePath: await dir.write('old2.har', a2) });
    return { result: r, dir: dir.dir };
  }

  it('one testcase per pair; failures only for real differences; known and noise in system-out', async () => {
    const { result: r } = await result();
    const suite = parseXml(renderJunit(r, { timestamp: new Date('2026-01-01T00:00:00Z') }));
    assert.equal(suite.name, 'testsuite');
    const cases = suite.children.filter((c) => c.name === 'testcase');
    assert.equal(cases.length, r.pairs.length);
    assert.equal(Number(suite.attrs.tests), cases.length);
    const failing = cases.filter((c) => c.children.some((x) => x.name === 'failure'));
    assert.equal(Number(suite.attrs.failures), failing.length);
    // real: /real, the hostile one, /gone (missing), /added (extra)
    assert.deepEqual(failing.map((c) => c.attrs.classname).sort(), ['GET /%3Cx%3E%26%22', 'GET /added', 'GET /gone', 'GET /real']);
    const byRoute = new Map(cases.map((c) => [c.attrs.classname, c]));
    assert.deepEqual(byRoute.get('GET /same')!.children, []);
    const known = byRoute.get('GET /known')!;
    assert.deepEqual(known.children.map((c) => c.name), ['system-out']);
    assert.match(known.children[0]!.text, /response\.body\.build.*known: build name is in the body/);
    assert.deepEqual(byRoute.get('GET /noise')!.children.map((c) => c.name), ['system-out']);
    const real = byRoute.get('GET /real')!.children[0]!;
    const found = r.findings.filter((f) => f.routes.includes('GET /real'));
    assert.equal(found.length, 2);
    assert.equal(real.attrs.message, `2 real findings (2 differences, paired): ${found.map((f) => `[${f.id}] ${findingLine(f)}`).join('; ')}`);
    assert.match(real.attrs.message!, /response\.body\.v changed 1 → 2 in 1 of 1 GET \/real/);
    assert.match(real.text, /response\.body\.v: 1 → 2/);
    assert.match(real.text, /response\.body\.note: "a" → "b"/);
    assert.match(known.children[0]!.text, /^1 finding:\n {2}\[F\w+\] response\.body\.build changed "old" → "new" in 1 of 1 GET \/known \(known: build name is in the body\)\n/);
    assert.equal(byRoute.get('GET /real')!.attrs.name, '/GET /real#1');
  });

  it('captured text cannot break the XML', async () => {
    const { result: r } = await result();
    const xml = renderJunit(r);
    const suite = parseXml(xml);
    const hostile = suite.children.find((c) => c.attrs.classname === 'GET /%3Cx%3E%26%22')!;
    const failure = hostile.children.find((c) => c.name === 'failure')!;
    assert.ok(failure.text.includes('</failure><testcase name=\\"x\\"> & ]]>'), failure.text);
    assert.ok(!/[\u0001\uFFFE]/.test(xml), 'control characters are escaped');
    assert.ok(failure.text.includes('\\u0001') && failure.text.includes('\\ufffe') && failure.text.includes('\\ud800'));
    assert.equal(xmlEscape('a<b>&"\''), 'a&lt;b&gt;&amp;&quot;&apos;');
    assert.equal(xmlEscape('😀'), '😀', 'surrogate pairs stay');
  });

  it('a failing case names its findings (id and line) in the message, and lists them before its rows', async () => {
    const dir = tempDir();
    // One change on three routes (one finding), one on a single route, one route that stays the same.
    const side = (server: string, count: number) =>
      capture([
        { url: 'http://127.0.0.1:3001/a', body: { ok: true }, responseHeaders: [['Server', server]] },
        { url: 'http://127.0.0.1:3001/b?page=2', body: { count }, responseHeaders: [['Server', server]] },
        { url: 'http://127.0.0.1:3001/c', body: { ok: true }, responseHeaders: [['Server', server]] },
        { url: 'http://127.0.0.1:3001/same', body: { ok: true } },
      ]);
    const r = await diffCaptures(await dir.write('old.har', side('api/1.4', 1)), await dir.write('new.har', side('api/2.0', 2)));
    const server = r.findings.find((f) => f.pattern === 'response.headers.server')!;
    const count = r.findings.find((f) => f.pattern === 'response.body.count')!;
    assert.equal(server.entries, 3);
    assert.deepEqual(server.routes.length, 3);
    const suite = parseXml(renderJunit(r, { timestamp: new Date('2026-01-01T00:00:00Z') }));
    const cases = new Map(suite.children.filter((c) => c.name === 'testcase').map((c) => [c.attrs.classname, c]));
    assert.equal(cases.size, 4);
    assert.equal(Number(suite.attrs.failures), 3);
    assert.deepEqual(cases.get('GET /same')!.children, []);
    for (const route of ['GET /a', 'GET /c']) {
      const failure = cases.get(route)!.children.find((c) => c.name === 'failure')!;
      assert.equal(failure.attrs.message, `1 real finding (1 difference, paired): [${server.id}] ${findingLine(server)}`);
      assert.match(failure.attrs.message!, /response\.headers\.server changed "api\/1\.4" → "api\/2\.0" in 3 of 3 entries, 3 routes/);
    }
    const b = cases.get('GET /b')!.children.find((c) => c.name === 'failure')!;
    const order = r.findings.filter((f) => f === server || f === count);
    assert.equal(b.attrs.message, `2 real findings (2 differences, paired): ${order.map((f) => `[${f.id}] ${findingLine(f)}`).join('; ')}`);
    // The text: its findings, then its rows (each row under the findings that hold it).
    const lines = b.text.split('\n');
    assert.deepEqual(lines.slice(0, 3), ['2 findings:', ...order.map((f) => `  [${f.id}] ${findingLine(f)}`)]);
    assert.equal(lines[3], '');
    assert.equal(lines[4], '2 rows:');
    const rows = r.differences.filter((d) => d.route === 'GET /b');
    assert.deepEqual(lines.slice(5).map((l) => l.match(/^ {2}\[(\w+)\]/)?.[1]), rows.map((d) => d.id));
    assert.ok(rows.every((d) => d.finding === server.id || d.finding === count.id));
    // Only the first few findings go in the message; the text keeps them all.
    const short = parseXml(renderJunit(r, { maxInMessage: 1 }));
    const bShort = short.children.find((c) => c.attrs.classname === 'GET /b')!.children[0]!;
    assert.equal(bShort.attrs.message, `2 real findings (2 differences, paired): [${order[0]!.id}] ${findingLine(order[0]!)}; … 1 more`);
    assert.equal(bShort.text, b.text);
  });

  it('bb diff --junit FILE and --html FILE write the reports; --junit - writes XML alone to stdout', async () => {
    const { dir } = await result();
    const junit = join(dir, 'report.xml');
    const html = join(dir, 'report.html');
    const run = startBb(['diff', join(dir, 'old.har'), join(dir, 'new.har'), '--junit', junit, '--html', html]);
    assert.equal(await run.exited, 1, run.stderr());
    const suite = parseXml(await readFile(junit, 'utf8'));
    assert.equal(Number(suite.attrs.failures), 6, 'all real without a config');
    assert.match(await readFile(html, 'utf8'), /^<!doctype html>/);
    const toStdout = startBb(['diff', join(dir, 'old.har'), join(dir, 'new.har'), '--junit', '-']);
    assert.equal(await toStdout.exited, 1);
    assert.equal(parseXml(toStdout.stdout()).name, 'testsuite');
    assert.match(toStdout.stderr(), /^DIFF: /);
    const twice = startBb(['diff', join(dir, 'old.har'), join(dir, 'new.har'), '--junit', '-', '--html', '-']);
    assert.equal(await twice.exited, 2);
    assert.match(twice.stderr(), /only one of --json, --html and --junit/);
  });
});
