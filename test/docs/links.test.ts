// The documentation's own links: README.md and every docs/*.md page. Each
// relative link ([x](path), ![x](path), path#anchor, #anchor, reference
// definitions) must name a file in the repository, and each #anchor a
// heading of the file it points into, slugged as GitHub does. README stays a
// landing page: under 300 lines.
//
// And the links from the code to the docs: a comment in a source, test or
// bench file that names `docs/<page>.md "<Heading>"` (or `docs/<page>.md`
// alone) must name a page that exists and a heading that page has, written
// as the page writes it, so a renamed section breaks this test rather than
// the reader's trail. No comment points at the design notes kept outside
// the repository, which its readers never see.
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

/** The lines of a markdown text with fenced code blocks (fences included) blanked out. */
function unfenced(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
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
}

/** The text with fenced code blocks and inline code spans blanked out (same line count). */
function prose(markdown: string): string {
  // A code span (within one paragraph) keeps its place and its line breaks, not its characters.
  return unfenced(markdown)
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

/** A line's ATX heading text (closing #s dropped), or undefined when the line is no heading. */
function headingOf(line: string): string | undefined {
  return /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1];
}

/** Every anchor a markdown file offers: its headings (duplicates get -1, -2, ...) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of unfenced(markdown)) {
    const heading = headingOf(line);
    if (heading !== undefined) {
      const base = slug(heading);
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

/** Source, test and bench files (and the bin, the examples): every script of ours outside node_modules and dist. */
function codeFiles(dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return ['node_modules', 'dist', 'captures'].includes(d.name) || d.name.startsWith('.') ? [] : codeFiles(path);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(d.name) ? [relative(root, path)] : [];
  });
}

/** One comment of a script. */
interface Comment {
  /** The line its run of comment lines starts on (1-based). */
  line: number;
  /** Its text, the comment markers dropped, its lines joined by single spaces. */
  text: string;
}

/**
 * The comments of a script, each run of comment lines (`//` lines, or the
 * lines of a `/** ... *\/` block) joined into one text by single spaces, so a
 * reference wrapped over two lines reads as one.
 */
function commentsOf(source: string): Comment[] {
  const comments: Comment[] = [];
  let open: Comment | undefined;
  source.split('\n').forEach((line, i) => {
    const whole = /^\s*(?:\/\/+|\/\*+|\*+(?!\/))\s?(.*)$/.exec(line);
    const tail = whole ? undefined : /\s\/\/\s?(.*)$/.exec(line);
    const text = (whole ?? tail)?.[1].replace(/\s*\*+\/\s*$/, '').trim();
    if (text === undefined) {
      open = undefined;
      return;
    }
    if (open && whole) {
      if (text !== '') open.text = open.text === '' ? text : `${open.text} ${text}`;
    } else {
      open = { line: i + 1, text };
      comments.push(open);
    }
    if (!whole) open = undefined; // a comment after code stands alone
  });
  return comments;
}

/** Each `docs/<page>.md` (or `docs/<page>.md#anchor`) a comment names, with the `"Heading"` that follows it, if any. */
function docsRefsOf(comment: string): { page: string; heading?: string }[] {
  return [...comment.matchAll(/\bdocs\/([\w.-]+?\.md(?:#[\w-]+)?)(?:\s+"([^"]+)")?/g)].map((m) => ({ page: `docs/${m[1]}`, heading: m[2] }));
}

/** Why a comment's reference to a docs page (and heading or anchor) is broken, or undefined when both exist. */
function brokenDocsRef(page: string, heading?: string): string | undefined {
  if (page.includes('#')) return brokenLink('README.md', page) ?? (heading === undefined ? undefined : brokenDocsRef(page.split('#')[0], heading));
  const file = join(root, page);
  if (!existsSync(file)) return `${page}: no such page`;
  if (heading === undefined) return undefined;
  const headings = unfenced(readFileSync(file, 'utf8')).flatMap((line) => headingOf(line) ?? []);
  const wanted = heading.replace(/\s+/g, ' ');
  if (headings.some((h) => h.replace(/\s+/g, ' ') === wanted)) return undefined;
  return `${page} has no heading "${wanted}" (it has: ${headings.map((h) => `"${h}"`).join(', ')})`;
}

/** The design notes outside the repository, by name. */
const designNotes = /\bDESIGN\b/;

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

describe('links from code comments to the docs', () => {
  const files = codeFiles();

  it('finds the scripts: source, test and bench', () => {
    for (const f of ['index.ts', 'diff/pair.ts', 'test/docs/links.test.ts', 'bench/run.mjs']) assert.ok(files.includes(f), f);
  });

  it('every docs/<page>.md "<Heading>" in a comment names a page and a heading it has', () => {
    const broken = files.flatMap((f) =>
      commentsOf(readFileSync(join(root, f), 'utf8')).flatMap(({ line, text }) =>
        docsRefsOf(text).flatMap(({ page, heading }) => {
          const why = brokenDocsRef(page, heading);
          return why === undefined ? [] : [`${f}:${line}: ${why}`];
        }),
      ),
    );
    assert.deepEqual(broken, []);
  });

  it('no comment, README or docs page points at the design notes outside the repository', () => {
    const inComments = files.flatMap((f) =>
      commentsOf(readFileSync(join(root, f), 'utf8')).flatMap(({ line, text }) => {
        const at = text.search(designNotes);
        return at === -1 ? [] : [`${f}:${line}: …${text.slice(Math.max(0, at - 30), at + 40)}…`];
      }),
    );
    const inPages = pages.flatMap((page) =>
      readFileSync(join(root, page), 'utf8')
        .split('\n')
        .flatMap((text, i) => (designNotes.test(text) ? [`${page}:${i + 1}: ${text}`] : [])),
    );
    assert.deepEqual([...inComments, ...inPages], []);
  });

  it('checks what it claims to: comments, references, pages and headings', () => {
    const source = [
      '// One (docs/diff.md "What is',
      '// compared"): two',
      'const x = 1; // after code (docs/timing.md)',
      '/**',
      ' * A block (docs/nope.md "X").',
      ' */',
      "const url = 'http://a/b';",
      '/** One line. */',
    ].join('\n');
    assert.deepEqual(commentsOf(source), [
      { line: 1, text: 'One (docs/diff.md "What is compared"): two' },
      { line: 3, text: 'after code (docs/timing.md)' },
      { line: 4, text: 'A block (docs/nope.md "X").' },
      { line: 8, text: 'One line.' },
    ]);
    assert.deepEqual(
      commentsOf(source).flatMap((c) => docsRefsOf(c.text)),
      [{ page: 'docs/diff.md', heading: 'What is compared' }, { page: 'docs/timing.md', heading: undefined }, { page: 'docs/nope.md', heading: 'X' }],
    );
    assert.deepEqual(docsRefsOf('the docs/*.md pages; docs/diff.md shows them'), [{ page: 'docs/diff.md', heading: undefined }]);
    assert.equal(brokenDocsRef('docs/diff.md', 'What is compared'), undefined);
    assert.equal(brokenDocsRef('docs/diff.md', 'Triage: known differences, noise, `bb known add`, `bb noise`'), undefined);
    assert.equal(brokenDocsRef('docs/timing.md'), undefined);
    assert.match(brokenDocsRef('docs/diff.md', 'Pair') ?? '', /docs\/diff\.md has no heading "Pair"/);
    assert.match(brokenDocsRef('docs/diff.md', 'pairing') ?? '', /has no heading "pairing"/);
    assert.match(brokenDocsRef('docs/nope.md', 'X') ?? '', /docs\/nope\.md: no such page/);
    assert.deepEqual(docsRefsOf('(docs/diff.md#pairing)'), [{ page: 'docs/diff.md#pairing', heading: undefined }]);
    assert.equal(brokenDocsRef('docs/diff.md#pairing'), undefined);
    assert.match(brokenDocsRef('docs/diff.md#pair') ?? '', /docs\/diff\.md has no heading #pair/);
    assert.ok(designNotes.test('see DESIGN.md "Pair"') && !designNotes.test('by design'));
  });
});
