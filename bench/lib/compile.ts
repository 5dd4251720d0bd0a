// Turns a benchmark helper (TypeScript) into plain JavaScript that Node runs
// without tsx: tsx's loader thread adds ~30 MiB of RSS and its own CPU to a
// process, and the helpers' RSS and CPU are what the benchmark measures.
//
// TypeScript's transpileModule strips the types file by file; every import
// is then pointed at an absolute file URL (local .ts imports compiled
// alongside, bare package names resolved from here), so the output runs
// from a temp folder.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** Compiles `tsFile` (and the local .ts files it imports) into `outDir`; returns the entry's path. */
export function compileForNode(tsFile: string, outDir: string, done = new Map<string, string>()): string {
  const known = done.get(tsFile);
  if (known) return known;
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, `${done.size}-${basename(tsFile).replace(/\.ts$/, '.mjs')}`);
  done.set(tsFile, out);
  const source = readFileSync(tsFile, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, removeComments: true },
    fileName: tsFile,
  });
  const from = pathToFileURL(tsFile);
  // Static and side-effect imports, and dynamic import() (comments are gone, so only code matches).
  const rewritten = outputText.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\2/g, (whole, lead: string, quote: string, spec: string) => {
    if (spec.startsWith('node:')) return whole;
    let target: string;
    if (spec.startsWith('.')) {
      const url = new URL(spec, from);
      const tsTwin = fileURLToPath(url).replace(/\.js$/, '.ts');
      target = spec.endsWith('.js') && existsSync(tsTwin) ? pathToFileURL(compileForNode(tsTwin, outDir, done)).href : url.href;
    } else {
      target = import.meta.resolve(spec);
    }
    return `${lead}${quote}${target}${quote}`;
  });
  writeFileSync(out, rewritten);
  return out;
}
