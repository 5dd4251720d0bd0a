// The house rules over the import graph of bb's sources: each folder is used
// through its face (index.ts), a face lists only what other folders use,
// layers import only downwards, and no module imports itself in a circle.
// A failing case names the file and the import (or the name).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { allSources, repoRoot, sourceFiles } from '../helpers/sources.js';
import { exportedNames, faceFiles, importsOf as importsByName, programOf } from '../helpers/faces.js';

const root = repoRoot;

/** Each folder and the folders it may import (through their faces). */
const LAYERS: Record<string, string[]> = {
  core: [],
  proxy: ['core'],
  capture: ['core', 'proxy'],
  diff: ['core', 'capture'],
  inspect: ['core', 'capture'],
  // The live web view: under scenario/ because shadow feeds it; it imports nothing from scenario/.
  ui: ['core', 'proxy', 'capture', 'diff', 'inspect'],
  scenario: ['core', 'proxy', 'capture', 'diff', 'ui'],
  cli: ['core', 'proxy', 'capture', 'diff', 'inspect', 'ui', 'scenario'],
};

/** Relative imports of a file (static, re-exports, dynamic with a literal), resolved to absolute .ts paths. */
const importsOf = (file: string): { spec: string; target: string }[] =>
  importsByName(relative(root, file)).map(({ spec, target }) => ({ spec, target: join(root, target) }));

/**
 * scenario/'s products and the sibling products each may import (through
 * their index.ts): a recording proxy is the floor; replay records through it;
 * compare boots servers and drives them with a scenario or a replay. A
 * product never imports scenario/index.ts, which is for other folders.
 * shadow/ sits beside replay on record, and borrows replay's own head writer
 * and connection for its mirrors.
 */
const SCENARIO_PRODUCTS: Record<string, string[]> = {
  record: [],
  replay: ['record'],
  compare: ['record', 'replay'],
  shadow: ['record', 'replay'],
};

const folderOf = (path: string): string => relative(root, path).split('/')[0]!;
/** The scenario product a path lies in ('' for scenario/'s own files), or undefined outside scenario/. */
const productOf = (path: string): string | undefined => {
  const parts = relative(root, path).split('/');
  if (parts[0] !== 'scenario') return undefined;
  return parts.length > 2 ? parts[1]! : '';
};
const files = allSources();

describe('the import graph', () => {
  it('reaches another folder only through its index.ts', () => {
    const past: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      for (const { spec, target } of importsOf(file)) {
        const to = folderOf(target);
        if (to === from || !(to in LAYERS)) continue;
        if (relative(root, target) !== `${to}/index.ts`) past.push(`${relative(root, file)} imports ${spec}`);
      }
    }
    assert.deepEqual(past, []);
  });

  it('runs downwards: each folder imports only the layers under it, and nothing imports cli/', () => {
    const up: string[] = [];
    for (const file of files) {
      const from = folderOf(file);
      if (!(from in LAYERS)) continue; // the package entry point may use every face
      for (const { spec, target } of importsOf(file)) {
        const to = folderOf(target);
        if (to === from) continue;
        if (!LAYERS[from]!.includes(to)) up.push(`${relative(root, file)} (${from}) imports ${spec} (${to})`);
      }
    }
    assert.deepEqual(up, []);
  });

  it("keeps scenario/'s products apart: a product imports a sibling only through its index.ts, and only one under it", () => {
    const past: string[] = [];
    for (const file of files) {
      const from = productOf(file);
      if (!from) continue;
      for (const { spec, target } of importsOf(file)) {
        const to = productOf(target);
        if (to === undefined || to === from) continue;
        if (!(from in SCENARIO_PRODUCTS)) past.push(`${relative(root, file)} lies in scenario/${from}/, which is not a product the house knows`);
        else if (to === '') past.push(`${relative(root, file)} (${from}) imports ${spec}: scenario/'s face is for other folders`);
        else if (!SCENARIO_PRODUCTS[from]!.includes(to)) past.push(`${relative(root, file)} (${from}) imports ${spec} (${to}), not a product under it`);
        else if (relative(root, target) !== `scenario/${to}/index.ts`) past.push(`${relative(root, file)} (${from}) imports ${spec}, not scenario/${to}/index.ts`);
      }
    }
    assert.deepEqual(past, []);
  });

  it('has no circles', () => {
    const graph = new Map(files.map((f) => [f, importsOf(f).map((i) => i.target).filter((t) => t.endsWith('.ts'))]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      stack.push(f);
      for (const t of graph.get(f) ?? []) {
        if (state.get(t) === 'open') circles.push(stack.slice(stack.indexOf(t)).concat(t).map((p) => relative(root, p)).join(' → '));
        else if (!state.has(t)) visit(t);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of files) if (!state.has(f)) visit(f);
    assert.deepEqual(circles, []);
  });

  it('keeps process.env and process.exit in cli/ and the package entry point', () => {
    const offenders = files
      .filter((f) => ['core', 'proxy', 'capture', 'diff', 'inspect', 'ui', 'scenario'].includes(folderOf(f)))
      .filter((f) => !relative(root, f).startsWith('scenario/compare/demo/')) // the demo server is a program of its own
      .filter((f) => /process\.env\b|process\.exit\(/.test(readFileSync(f, 'utf8').replace(/^\s*(\/\/|\/\*|\*).*$/gm, '')))
      .map((f) => relative(root, f));
    assert.deepEqual(offenders, []);
  });

  it('core/ imports only node: modules', () => {
    const bad = sourceFiles(join(root, 'core')).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!).filter((s) => !s.startsWith('node:') && !s.startsWith('./')).map((s) => `${relative(root, f)}: ${s}`),
    );
    assert.deepEqual(bad, []);
  });

  // A face lists what the rest of bb uses, nothing else: a name no other
  // folder imports is the folder's own business (tests reach inside). For a
  // face below a folder (diff/normalize/, scenario/replay/) "other" is any
  // file outside that subfolder. The package entry point is checked on its
  // own (entry-point.test.ts) and counts as a user of every face.
  it('a face exports only names another folder imports', () => {
    const faces = faceFiles();
    const program = programOf(faces);
    const imports = files.map((f) => relative(root, f)).flatMap(importsByName);
    const unused: string[] = [];
    for (const face of faces) {
      const dir = `${dirname(face)}/`;
      const used = new Set(imports.filter((i) => i.target === face && !i.from.startsWith(dir)).flatMap((i) => i.names));
      if (used.has('*')) continue;
      for (const name of exportedNames(program, face)) if (!used.has(name)) unused.push(`${face} exports ${name}, which no file outside ${dir} imports`);
    }
    assert.deepEqual(unused, []);
  });
});
