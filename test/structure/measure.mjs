// Measures the structure of a bb checkout for issue 16's before/after table:
// files per folder, import circles, cross-folder imports past a face
// (index.ts), error classes, BB_ codes, process.env readers below cli/,
// README length. Reads the files git tracks; needs no node_modules, so it
// runs on a bare `git worktree add --detach DIR COMMIT`.
//   node test/structure/measure.mjs [DIR]        (default: this checkout)
//   node test/structure/measure.mjs DIR --list   (also name each offender)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : fileURLToPath(new URL('../../', import.meta.url)));
const list = process.argv.includes('--list');
const tracked = execFileSync('git', ['-C', root, 'ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean);
const ts = tracked.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
// Library sources: everything but tests, benchmarks and examples.
const NOT_SOURCE = /^(test|bench|examples|types|scripts)\//;
const sources = ts.filter((f) => !NOT_SOURCE.test(f));
const folderOf = (f) => (f.includes('/') ? f.split('/')[0] : '(root)');

/** Relative imports of a file, resolved to repo paths (the same forms faces.test.ts reads). */
function importsOf(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const out = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)|(?:^|\n)\s*import\s+'(\.[^']+)'/g)) {
    const spec = m[1] ?? m[2] ?? m[3];
    const abs = resolve(dirname(join(root, file)), spec.replace(/\.js$/, '.ts'));
    const target = existsSync(abs) ? abs : existsSync(join(abs, 'index.ts')) ? join(abs, 'index.ts') : abs;
    out.push({ spec, target: relative(root, target) });
  }
  return out;
}

// Files per folder (.ts, tracked).
const perFolder = new Map();
for (const f of ts) perFolder.set(folderOf(f), (perFolder.get(folderOf(f)) ?? 0) + 1);
const testFolders = [...new Set(ts.filter((f) => f.startsWith('test/')).map((f) => f.split('/')[1]).filter((p) => !p.endsWith('.ts')))].sort();

// Imports past a face: a source file importing another source folder's file other than its index.ts.
const graph = new Map(sources.map((f) => [f, importsOf(f)]));
const past = [];
for (const [file, imports] of graph) {
  for (const { spec, target } of imports) {
    const to = folderOf(target);
    if (to === folderOf(file) || to === '(root)' || !target.endsWith('.ts')) continue;
    if (target !== `${to}/index.ts`) past.push(`${file} → ${spec}`);
  }
}

// Import circles: strongly connected components of more than one file (Tarjan).
const circles = [];
{
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const { target: w } of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) circles.push(scc.sort().join(' ↔ '));
    }
  };
  for (const f of graph.keys()) if (!idx.has(f)) strong(f);
}

// Error classes: classes that extend Error or (transitively) another such class.
const extendsOf = new Map();
const classFile = new Map();
for (const f of sources) {
  for (const m of readFileSync(join(root, f), 'utf8').matchAll(/\bclass\s+(\w+)\s*(?:<[^>]*>)?\s*extends\s+([\w.]+)/g)) {
    extendsOf.set(m[1], m[2]);
    classFile.set(m[1], f);
  }
}
const isError = (name, seen = new Set()) => {
  if (name === 'Error' || /^(Type|Range|Syntax)Error$/.test(name)) return true;
  const base = extendsOf.get(name);
  if (base === undefined || seen.has(name)) return false;
  seen.add(name);
  return isError(base, seen);
};
const errorClasses = [...extendsOf.keys()].filter((c) => isError(c)).map((c) => `${c} (${classFile.get(c)}, extends ${extendsOf.get(c)})`).sort();

// Codes: distinct 'BB_…' string literals in the sources; the registered table when core/codes.ts exists.
const codes = new Set();
for (const f of sources) for (const m of readFileSync(join(root, f), 'utf8').matchAll(/['"`](BB_[A-Z0-9_]+)['"`]/g)) codes.add(m[1]);
// Environment variable names are not error codes: a BB_ literal on a line that reads an environment.
const envNames = new Set();
for (const f of sources) for (const line of readFileSync(join(root, f), 'utf8').split('\n')) if (/\benv\b/.test(line)) for (const m of line.matchAll(/['"`](BB_[A-Z0-9_]+)['"`]/g)) envNames.add(m[1]);
for (const name of envNames) codes.delete(name);
let registered;
if (existsSync(join(root, 'core/codes.ts'))) registered = new Set([...readFileSync(join(root, 'core/codes.ts'), 'utf8').matchAll(/^\s*(BB_[A-Z0-9_]+)\s*:/gm)].map((m) => m[1]));

// process.env / process.exit below cli/ (comments stripped).
const envBelowCli = sources
  .filter((f) => !['cli', '(root)'].includes(folderOf(f)))
  .filter((f) => /process\.env\b|process\.exit\(/.test(readFileSync(join(root, f), 'utf8').replace(/^\s*(\/\/|\/\*|\*).*$/gm, '')));

const readmeLines = existsSync(join(root, 'README.md')) ? readFileSync(join(root, 'README.md'), 'utf8').split('\n').length - 1 : 0;
const docsPages = tracked.filter((f) => /^docs\/[^/]+\.md$/.test(f)).length;
const longest = sources.map((f) => [f, readFileSync(join(root, f), 'utf8').split('\n').length - 1]).sort((a, b) => b[1] - a[1])[0];

const commit = execFileSync('git', ['-C', root, 'log', '-1', '--format=%h'], { encoding: 'utf8' }).trim();
console.log(`structure of ${root} at ${commit}`);
console.log(`files per folder (.ts): ${[...perFolder].sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`test/ subfolders: ${testFolders.join(', ')}`);
console.log(`import circles (strongly connected groups of source files): ${circles.length}`);
if (list || circles.length <= 5) for (const c of circles) console.log(`  ${c}`);
console.log(`cross-folder imports past a face: ${past.length} (${past.filter((p) => p.includes('/')  && p.split(' → ')[0].includes('/')).length} from folders, ${past.filter((p) => !p.split(' → ')[0].includes('/')).length} from root files)`);
if (list) for (const p of past) console.log(`  ${p}`);
console.log(`error classes: ${errorClasses.length}`);
if (list || errorClasses.length <= 12) for (const c of errorClasses) console.log(`  ${c}`);
console.log(`distinct BB_ codes in the sources: ${codes.size}${registered ? `; registered in core/codes.ts: ${registered.size}; used but not registered: ${[...codes].filter((c) => !registered.has(c)).join(', ') || 'none'}` : ' (no table)'}`);
if (list) console.log(`  ${[...codes].sort().join(' ')}`);
console.log(`environment names left out of the codes: ${[...envNames].sort().join(' ') || 'none'}`);
console.log(`source files reading process.env / calling process.exit below cli/: ${envBelowCli.length}${envBelowCli.length ? ` (${envBelowCli.join(', ')})` : ''}`);
console.log(`README.md lines: ${readmeLines}; docs/*.md pages: ${docsPages}; longest source file: ${longest[0]} ${longest[1]} lines`);

// Faces (issue 32): how many names each folder's index.ts exports, and how
// many of them no source file outside the folder imports. TypeScript comes
// from this script's own checkout, so a bare worktree can still be measured.
{
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  let ts;
  try {
    ts = require('typescript');
  } catch {
    console.log('faces: typescript not installed beside this script, skipped');
  }
  if (ts) {
    const faces = [...new Set(sources.map(folderOf))].filter((f) => f !== '(root)' && existsSync(join(root, f, 'index.ts'))).sort();
    const entry = existsSync(join(root, 'index.ts')) ? [join(root, 'index.ts')] : [];
    const program = ts.createProgram([...entry, ...faces.map((f) => join(root, f, 'index.ts'))], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true });
    const checker = program.getTypeChecker();
    const exportsOf = (path) => {
      const file = program.getSourceFile(path);
      const symbol = file && checker.getSymbolAtLocation(file);
      return symbol ? checker.getExportsOfModule(symbol).map((s) => s.getName()) : [];
    };
    // Names imported from a face by files outside its folder ('*' = all of them).
    const used = new Map(faces.map((f) => [f, new Set()]));
    for (const file of sources) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?(\*|\{[^}]*\}|[\w$]+(?:\s*,\s*\{[^}]*\})?)(?:\s+as\s+[\w$]+)?\s+from\s+'(\.[^']+)'/g)) {
        const target = relative(root, resolve(dirname(join(root, file)), m[3].replace(/\.js$/, '.ts')));
        const face = target.endsWith('/index.ts') ? target.slice(0, -'/index.ts'.length) : undefined;
        if (!face || !used.has(face) || folderOf(file) === face) continue;
        if (m[2] === '*') used.get(face).add('*');
        for (const part of (m[2].match(/\{([^}]*)\}/)?.[1] ?? '').split(',')) {
          const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0].trim();
          if (name) used.get(face).add(name);
        }
      }
    }
    const rows = faces.map((f) => {
      const names = exportsOf(join(root, f, 'index.ts'));
      const u = used.get(f);
      const unused = u.has('*') ? [] : names.filter((n) => !u.has(n));
      return { f, names, unused };
    });
    console.log(`faces' exports (names; of them imported by no other folder): ${rows.map((r) => `${r.f} ${r.names.length} (${r.unused.length})`).join(', ')}`);
    if (list) for (const r of rows) if (r.unused.length) console.log(`  ${r.f} unused: ${r.unused.join(' ')}`);
    if (entry.length) {
      const names = exportsOf(entry[0]);
      console.log(`package entry point (index.ts) exports: ${names.length} names`);
      if (list) console.log(`  ${names.sort().join(' ')}`);
    }
  }
}

// Tests at the mirrored path (issue 32): test/<same path>.test.ts or .cli.test.ts.
{
  const testFiles = new Set(tracked.filter((f) => /^test\/.*\.test\.ts$/.test(f)));
  const mirrored = sources.filter((f) => ['test', 'cli.test'].some((k) => testFiles.has(`test/${f.replace(/\.ts$/, `.${k}.ts`)}`)));
  const named = new Set(sources.map((f) => f.replace(/\.ts$/, '')));
  const topical = [...testFiles].filter((t) => !named.has(t.slice('test/'.length).replace(/(\.cli)?\.test\.ts$/, '')) && !t.startsWith('test/e2e/') && !t.startsWith('test/structure/') && !t.startsWith('test/docs/'));
  console.log(`source files with a test at test/<same path>.test.ts (or .cli.test.ts): ${mirrored.length} of ${sources.length}; test files named by topic (outside e2e/, structure/, docs/): ${topical.length} of ${testFiles.size}`);
  if (list) for (const t of topical.sort()) console.log(`  ${t}`);
}
