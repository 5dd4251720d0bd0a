// The --junit report: one <testsuite>, one <testcase> per entry pair
// (name = entry id, classname = "METHOD path"), so CI systems list them
// natively. A pair fails only for real differences: the failure's message
// names its findings (id + the terminal's finding line), its text lists
// them (each with its consequences under it) and then the rows. Known and noise ones go to <system-out>, the same
// way. Captured text is escaped for XML
// and characters XML 1.0 cannot hold (control characters, lone surrogates)
// are written as \uXXXX.
import { timingRoute } from '../timing.js';
import { ms, pValue, times } from './timing-text.js';
import type { DiffResult, Difference, Finding } from '../types.js';
import { brokenRatificationText, consequenceLines, elidePair, findingLine, plural } from './text.js';

/** Options for the JUnit report. */
export interface JunitOptions {
  /** The testsuite's name (default "bb diff"). */
  suite?: string;
  /** Differences listed per test case (default 50). */
  maxListed?: number;
  /** Findings named in a failure's message (default 5; the text lists them all). */
  maxInMessage?: number;
  /** The report's timestamp (default now). */
  timestamp?: Date;
}

// Characters outside XML 1.0's Char production (https://www.w3.org/TR/xml/#charsets).
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\uD800-\uDBFF\uDC00-\uDFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Escapes text for XML content and attributes. */
export function xmlEscape(s: unknown): string {
  return String(s)
    .replace(NOT_XML, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function line(d: Difference): string {
  const [a, b] = elidePair(d.old, d.new, 200, d.path);
  const change = d.kind === 'added' || d.kind === 'extra' ? `+ ${b}` : d.kind === 'removed' || d.kind === 'missing' ? `- ${a}` : `${a} → ${b}`;
  const where = d.path || '(whole entry)';
  return `[${d.id}] ${d.kind} ${where}: ${change}${d.reason ? ` (known: ${d.reason})` : ''}`;
}


/** The findings the rows belong to, in the result's order (real first, largest first). */
function findingsOf(diffs: Difference[], findings: Map<string, { finding: Finding; order: number }>): Finding[] {
  const ids = new Set(diffs.map((d) => d.finding).filter((id): id is string => id !== undefined));
  return [...ids]
    .flatMap((id) => {
      const f = findings.get(id);
      return f ? [f] : [];
    })
    .sort((a, b) => a.order - b.order)
    .map((f) => f.finding);
}

/** "[id] finding line" (with the reason of a known one). */
function findingText(f: Finding): string {
  const broken = brokenRatificationText(f);
  return `[${f.id}] ${findingLine(f)}${f.reason ? ` (known: ${f.reason})` : ''}${broken ? `; ${broken}` : ''}`;
}

/** Findings, then the rows: what a test case's failure or system-out says. */
function listing(found: Finding[], diffs: Difference[], max: number): string {
  const lines = [`${plural(found.length, 'finding')}:`, ...found.flatMap((f) => [`  ${findingText(f)}`, ...consequenceLines(f).map((k) => `    ${k}`)]), '', `${plural(diffs.length, 'row')}:`];
  lines.push(...diffs.slice(0, max).map((d) => `  ${line(d)}`));
  if (diffs.length > max) lines.push(`  … ${diffs.length - max} more`);
  return lines.join('\n');
}

/** Renders the result as a JUnit XML document. */
export function renderJunit(result: DiffResult, opts: JunitOptions = {}): string {
  const max = opts.maxListed ?? 50;
  const inMessage = opts.maxInMessage ?? 5;
  const findings = new Map(result.findings.map((finding, order) => [finding.id, { finding, order }]));
  const byEntry = new Map<string, Difference[]>();
  // Timing findings get test cases of their own, one per route (below).
  const slower = new Map<string, Difference>();
  for (const d of result.differences) {
    if (d.kind === 'slower') {
      slower.set(timingRoute(d.entry), d);
      continue;
    }
    const list = byEntry.get(d.entry) ?? [];
    list.push(d);
    byEntry.set(d.entry, list);
  }
  const cases: string[] = [];
  let failures = 0;
  for (const p of result.pairs) {
    const diffs = byEntry.get(p.id) ?? [];
    byEntry.delete(p.id); // an id shared by two pairs reports its rows once
    const real = diffs.filter((d) => d.class === 'real');
    const other = diffs.filter((d) => d.class !== 'real');
    let inner = '';
    if (real.length) {
      failures++;
      const found = findingsOf(real, findings);
      const named = found.slice(0, inMessage).map(findingText);
      if (found.length > inMessage) named.push(`… ${found.length - inMessage} more`);
      const message = `${plural(found.length, 'real finding')} (${plural(real.length, 'difference')}, ${p.status}): ${named.join('; ')}`;
      inner += `\n    <failure message="${xmlEscape(message)}" type="bb.diff.${real[0]!.kind}">${xmlEscape(listing(found, real, max))}</failure>`;
    }
    if (other.length) inner += `\n    <system-out>${xmlEscape(listing(findingsOf(other, findings), other, max))}</system-out>`;
    cases.push(`  <testcase name="${xmlEscape(p.id)}" classname="${xmlEscape(p.route)}" time="0">${inner}${inner ? '\n  ' : ''}</testcase>`);
  }
  for (const r of result.timing?.routes ?? []) {
    const d = slower.get(r.route);
    const text = `${r.verdict} ${times(r.ratio)}${r.ci ? ` [${r.ci[0]}, ${r.ci[1]}]` : ''}, median ${ms(r.old.p50)} → ${ms(r.new.p50)} ms, p=${pValue(r.p)}, n=${r.old.n}/${r.new.n}`;
    let inner = `<system-out>${xmlEscape(text)}</system-out>`;
    if (d?.class === 'real') {
      failures++;
      inner = `<failure message="${xmlEscape(`slower than the budget ×${result.timing!.budget}: ${text}`)}" type="bb.diff.slower">${xmlEscape(line(d))}</failure>`;
    } else if (d) inner = `<system-out>${xmlEscape(`${text} (known: ${d.reason ?? ''})`)}</system-out>`;
    cases.push(`  <testcase name="${xmlEscape(r.route)}" classname="bb.timing" time="0">\n    ${inner}\n  </testcase>`);
  }
  // Stale known entries fail only when they alone made the verdict (--strict-known).
  const staleFail = result.verdict === 'diff' && result.counts.real === 0;
  for (const s of result.staleKnown) {
    const text = `known[${s.index}] where ${JSON.stringify(s.where)} path ${JSON.stringify(s.path)} matched nothing: ${s.reason}`;
    if (staleFail) failures++;
    const inner = staleFail ? `<failure message="stale known entry" type="bb.diff.stale">${xmlEscape(text)}</failure>` : `<system-out>${xmlEscape(text)}</system-out>`;
    cases.push(`  <testcase name="${xmlEscape(`known[${s.index}]`)}" classname="bb.known" time="0">\n    ${inner}\n  </testcase>`);
  }
  const ts = (opts.timestamp ?? new Date()).toISOString().replace(/\.\d+Z$/, '');
  const suite = opts.suite ?? 'bb diff';
  const props = `  <properties>\n    <property name="old" value="${xmlEscape(result.old.path)}"/>\n    <property name="new" value="${xmlEscape(result.new.path)}"/>\n    <property name="verdict" value="${xmlEscape(result.verdict)}"/>\n  </properties>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="${xmlEscape(suite)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0" time="0" timestamp="${ts}">
${props}
${cases.join('\n')}
</testsuite>
`;
}
