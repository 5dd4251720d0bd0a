// The faces of bb's folders read with the TypeScript compiler: which names an
// index.ts exports (re-exports followed), and which names each source file
// imports from which file (static, re-exported or dynamic). The structure
// tests (test/structure/) read the import graph and the faces from them.
import ts from 'typescript';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { allSources, repoRoot } from './sources.js';

/** Every folder face: an index.ts anywhere under the source folders, as a path from the root ("diff/normalize/index.ts"). */
export function faceFiles(): string[] {
  return allSources()
    .map((f) => relative(repoRoot, f))
    .filter((f) => f.endsWith('/index.ts'))
    .sort();
}

/** A program over some files, with bb's compiler options (tsconfig.json). */
export function programOf(files: string[]): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(join(repoRoot, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  return ts.createProgram(files.map((f) => join(repoRoot, f)), { ...config!.options, noEmit: true });
}

/** The names a module exports, re-exports followed (`export *` included). */
export function exportedNames(program: ts.Program, file: string): string[] {
  const source = program.getSourceFile(join(repoRoot, file));
  const checker = program.getTypeChecker();
  const symbol = source && checker.getSymbolAtLocation(source);
  return symbol ? checker.getExportsOfModule(symbol).map((s) => s.getName()).sort() : [];
}

/** One import or re-export of a relative module: the file it reaches (from the root) and the names it takes ('*' for all). */
export interface ImportOf {
  /** The importing file, from the root. */
  from: string;
  /** The specifier as written ("../diff/index.js"). */
  spec: string;
  /** The imported file, from the root ("diff/index.ts"; the specifier resolved as written when no .ts file is there). */
  target: string;
  /** The names taken from it, as the target spells them; '*' for a namespace import, `export *` or a dynamic import. */
  names: string[];
}

/** The relative imports of a file: static imports and re-exports, and dynamic imports of a literal. */
export function importsOf(file: string): ImportOf[] {
  const path = join(repoRoot, file);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, false);
  const out: ImportOf[] = [];
  const add = (spec: string, names: string[]): void => {
    if (!spec.startsWith('.')) return;
    const asTs = resolve(dirname(path), spec.replace(/\.js$/, '.ts'));
    out.push({ from: file, spec, target: relative(repoRoot, existsSync(asTs) ? asTs : resolve(dirname(path), spec)), names });
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const names: string[] = [];
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        if (clause?.name) names.push('default');
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) names.push('*');
        else if (bindings) for (const el of bindings.elements) names.push((el.propertyName ?? el.name).text);
      } else {
        const clause = node.exportClause;
        if (!clause || ts.isNamespaceExport(clause)) names.push('*');
        else for (const el of clause.elements) names.push((el.propertyName ?? el.name).text);
      }
      add(node.moduleSpecifier.text, names);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, ['*']);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}
