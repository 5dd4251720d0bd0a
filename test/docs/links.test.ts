// The documentation's own links: README.md and every docs/*.md page. Each
// relative link ([x](path), ![x](path), path#anchor, #anchor, reference
// definitions) must name a file in the repository, and each #anchor a
// heading of the file it points into, slugged as GitHub does. README stays a
// landing page: under 300 lines.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The text with fenced code blocks and inline code spans blanked out (same line count). */
function prose(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const kept = lines.map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length && line.trim() === open[1]) fence = undefined;
      return '';
    }
    if (open) {
      fence = open[1];
      return '';
    }
    return line;
  });
  // A code span (within one paragraph) keeps its place and its line breaks, not its characters.
  return kept
    .join('\n')
    .replace(/(`+)((?:[^\n]|\n(?![ \t]*\n))*?[^`])\1(?!`)/g, (span) => `code${span.replace(/[^\n]/g, '')}`);
}

/** GitHub's heading anchor: lower-case, punctuation but - and _ dropped, each space a -. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading keeps its text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown file offers: its headings (duplicates get -1, -2, ...) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = markdown.split('\n');
  let fence: string | undefined;
  for (const line of lines) {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length && line.trim() === open[1]) fence = undefined;
      continue;
    }
    if (open) {
      fence = open[1];
      continue;
    }
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

/** Inline links and images (their text may wrap), and reference definitions, outside code. */
function linksOf(markdown: string): Link[] {
  const text = prose(markdown);
  const lineAt = (offset: number) => text.slice(0, offset).split('\n').length;
  const links: Link[] = [];
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*(<[^>\n]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    links.push({ line: lineAt(m.index ?? 0), target: m[1].replace(/^<|>$/g, '') });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm)) {
    links.push({ line: lineAt(m.index ?? 0), target: m[1].replace(/^<|>$/g, '') });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** Why a link from `page` is broken, or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined; // another site
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = pathPart === '' ? join(root, page) : resolve(dirname(join(root, page)), pathPart.split('?')[0]);
  const inRepo = relative(root, file);
  if (inRepo.startsWith('..') || inRepo.split(sep)[0] === 'node_modules' || inRepo.split(sep)[0] === 'dist') {
    return `${target} points outside the repository's own files`;
  }
  if (!existsSync(file)) return `${target}: no such file ${inRepo}`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `${target}: #${anchor} points into ${inRepo}, which has no headings`;
  if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) return `${target}: ${inRepo} has no heading #${anchor}`;
  return undefined;
}

describe('documentation links', () => {
  it('finds the pages: README.md and docs/*.md', () => {
    assert.ok(pages.length > 1, 'docs/ holds pages');
  });

  for (const page of pages) {
    it(`${page}: every relative link and anchor resolves`, () => {
      const broken = linksOf(readFileSync(join(root, page), 'utf8'))
        .map(({ line, target }) => ({ line, why: brokenLink(page, target) }))
        .filter((b) => b.why !== undefined)
        .map((b) => `${page}:${b.line}: ${b.why}`);
      assert.deepEqual(broken, []);
    });
  }

  it('README.md is a landing page: under 300 lines', () => {
    const text = readFileSync(join(root, 'README.md'), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    assert.ok(lines < 300, `README.md has ${lines} lines`);
  });

  it('README.md links every docs page, and every docs page links back to README.md', () => {
    const fromReadme = new Set(linksOf(readFileSync(join(root, 'README.md'), 'utf8')).map((l) => l.target.split('#')[0]));
    for (const page of pages.slice(1)) {
      assert.ok(fromReadme.has(page), `README.md links ${page}`);
      const back = linksOf(readFileSync(join(root, page), 'utf8')).some((l) => l.target.split('#')[0] === '../README.md');
      assert.ok(back, `${page} links back to ../README.md`);
    }
  });

  it('checks what it claims to: slugs, code, missing files and anchors', () => {
    assert.equal(slug('The frame order as a picture: `bb frames --html`'), 'the-frame-order-as-a-picture-bb-frames---html');
    assert.equal(slug('bb — black-box traffic recorder and comparer'), 'bb--black-box-traffic-recorder-and-comparer');
    assert.equal(slug('Capture files and `bb recover`'), 'capture-files-and-bb-recover');
    assert.equal(slug('`_bb` fields'), '_bb-fields');
    assert.deepEqual(
      linksOf('[a](x.md) ![b](y.png "t") `[no](code.md)`\n```\n[no](fenced.md)\n```\n[c `d`](z.md#e)\n[ref]: w.md').map((l) => l.target),
      ['x.md', 'y.png', 'z.md#e', 'w.md'],
    );
    assert.deepEqual(
      linksOf('a [link whose text\nwraps](wrapped.md) and ``two `ticks` ``').map((l) => [l.line, l.target]),
      [[1, 'wrapped.md']],
    );
    assert.equal(brokenLink('README.md', 'https://example.com/x'), undefined);
    assert.equal(brokenLink('README.md', 'docs/diff.md#built-in-rules'), undefined);
    assert.equal(brokenLink('docs/reports.md', 'frames-html.png'), undefined);
    assert.equal(brokenLink('docs/reports.md', '#--json-file'), undefined);
    assert.match(brokenLink('README.md', 'docs/nope.md') ?? '', /no such file docs\/nope\.md/);
    assert.match(brokenLink('docs/diff.md', '../README.md#no-such-heading') ?? '', /README\.md has no heading #no-such-heading/);
    assert.match(brokenLink('docs/reports.md', 'docs/frames-html.png') ?? '', /no such file docs\/docs\/frames-html\.png/);
    assert.match(brokenLink('README.md', '../outside.md') ?? '', /outside the repository/);
  });
});
