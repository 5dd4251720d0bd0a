// The diff's config file (`--config bb.config.json`): `normalize`, `pairing`
// and `known` keys. Parsed and validated once, up front; every mistake is an
// BbError (BB_CONFIG_INVALID) naming the offending entry. A key no part of bb
// reads is refused with the nearest real one: a misspelt rule ("normalise")
// would otherwise be ignored in silence and its differences shown as real.
// The top level also holds the keys bb compare and bb replay read.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { DifferenceKind } from './types.js';
import type { DiffConfig, KnownConfig, PairingConfig, PathRuleConfig } from './config-types.js';
import type { KnownValues } from './types.js';
import { BUILTIN_RULE_NAMES, KEY_DETECTORS, ProtoSchema } from './normalize/index.js';
import { BbError, nearest, oneLine, unreadableWhy } from '../core/index.js';
import { isShapeName, TYPE_SHAPES } from './ratified.js';

export type * from './config-types.js';

const KINDS: DifferenceKind[] = ['changed', 'added', 'removed', 'extra', 'missing', 'reordered', 'slower'];

/** An empty config: built-in rules only. */
export function emptyDiffConfig(): DiffConfig {
  return { normalize: {}, pairing: {}, known: [] };
}

/** Reads and validates a config file. */
export async function loadDiffConfig(path: string): Promise<DiffConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw Object.assign(new BbError('BB_CONFIG_INVALID', `config ${path} cannot be read (${unreadableWhy(err)}): check the --config path.`), {});
  }
  return validateDiffConfig(parseConfigJson(text, path), path);
}

/** A config file's text as JSON (a leading BOM allowed); a one-line BB_CONFIG_INVALID naming `file` when it is not. bb compare's config reads through it too. */
export function parseConfigJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new BbError('BB_CONFIG_INVALID', `config ${file} is not valid JSON (${oneLine((err as Error).message)}): fix the file.`);
  }
}

function fail(where: string, msg: string): never {
  throw new BbError('BB_CONFIG_INVALID', `config ${where}: ${msg}`);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(where, 'must be an array');
  return v;
}

function optString(o: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') fail(`${where}.${key}`, 'must be a string');
  return v;
}

function needString(o: Record<string, unknown>, key: string, where: string): string {
  const v = optString(o, key, where);
  if (v === undefined || v === '') fail(`${where}.${key}`, 'is required (a non-empty string)');
  return v;
}

/** Every top-level key of a bb config file: the diff's own, then those bb compare and bb replay read from the same file. */
const CONFIG_FILE_KEYS: readonly string[] = ['normalize', 'pairing', 'known', 'servers', 'scenario', 'stepTimeoutMs', 'replay'];

/**
 * Refuses a key of `o` not in `allowed`, naming the nearest real one. Keys
 * that start with `$` (`$schema`) or `//` (a comment) are the user's own.
 */
export function onlyKeys(o: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(o)) {
    if (allowed.includes(key) || key.startsWith('$') || key.startsWith('//')) continue;
    const near = nearest(key, allowed);
    fail(where, `unknown key ${JSON.stringify(key)}: ${near ? `did you mean ${JSON.stringify(near)}?` : `the keys here are ${allowed.join(', ')} (and "//…" for a comment)`}`);
  }
}

function checkRegex(source: string, flags: string, where: string): void {
  try {
    new RegExp(source, flags);
  } catch (err) {
    fail(where, `bad regular expression ${JSON.stringify(source)}: ${(err as Error).message}`);
  }
}

/** Validates a parsed config document; `file` names it in messages. */
export function validateDiffConfig(doc: unknown, file = 'config'): DiffConfig {
  if (!isObj(doc)) fail(file, 'must be a JSON object with normalize / pairing / known keys');
  onlyKeys(doc, CONFIG_FILE_KEYS, file);
  const n = doc.normalize ?? {};
  if (!isObj(n)) fail(`${file} normalize`, 'must be an object');
  onlyKeys(n, ['disable', 'keys', 'patterns', 'headers', 'keep', 'paths', 'serverHome', 'unorderedArrays', 'proto'], `${file} normalize`);
  const disable = list(n.disable, `${file} normalize.disable`).map((name, i) => {
    if (typeof name !== 'string' || !BUILTIN_RULE_NAMES.includes(name)) {
      fail(`${file} normalize.disable[${i}]`, `unknown rule ${JSON.stringify(name)}; known rules: ${BUILTIN_RULE_NAMES.join(', ')}`);
    }
    return name;
  });
  const keys = list(n.keys, `${file} normalize.keys`).map((k, i) => {
    const where = `${file} normalize.keys[${i}]`;
    if (!isObj(k)) fail(where, 'must be an object like {"key": "systemPromptHash", "replace": "<SHA>"}');
    onlyKeys(k, ['key', 'pattern', 'replace'], where);
    const key = optString(k, 'key', where);
    const pattern = optString(k, 'pattern', where);
    if (!key && !pattern) fail(where, 'needs "key" or "pattern"');
    if (pattern) checkRegex(pattern, '', `${where}.pattern`);
    return { key, pattern, replace: needString(k, 'replace', where) };
  });
  const patterns = list(n.patterns, `${file} normalize.patterns`).map((p, i) => {
    const where = `${file} normalize.patterns[${i}]`;
    if (!isObj(p)) fail(where, 'must be an object like {"regex": "conn_[a-z0-9]+", "replace": "<CONN>"}');
    onlyKeys(p, ['name', 'regex', 'flags', 'replace', 'ordinal'], where);
    const regex = needString(p, 'regex', where);
    const flags = optString(p, 'flags', where) ?? '';
    if (/[^imsuy]/.test(flags)) fail(`${where}.flags`, `unsupported flags ${JSON.stringify(flags)} (use i, m, s, u)`);
    checkRegex(regex, flags, `${where}.regex`);
    const ordinal = optString(p, 'ordinal', where);
    if (ordinal !== undefined && !/^[A-Z][A-Z0-9_]*$/.test(ordinal)) fail(`${where}.ordinal`, 'must be an upper-case class name like MSG');
    return { name: optString(p, 'name', where), regex, flags, replace: optString(p, 'replace', where), ordinal };
  });
  const headers = list(n.headers, `${file} normalize.headers`).map((h, i) => {
    if (typeof h !== 'string') fail(`${file} normalize.headers[${i}]`, 'must be a header name');
    return h.toLowerCase();
  });
  const keep = list(n.keep, `${file} normalize.keep`).map((h, i) => {
    if (typeof h !== 'string') fail(`${file} normalize.keep[${i}]`, 'must be a key name');
    return h;
  });
  const paths = list(n.paths, `${file} normalize.paths`).map((p, i) => {
    const where = `${file} normalize.paths[${i}]`;
    if (!isObj(p)) fail(where, 'must be an object like {"path": "response.headers.content-length", "replace": "<LEN>"}');
    onlyKeys(p, ['where', 'path', 'replace', 'pattern', 'type', 'ignore'], where);
    const pattern = optString(p, 'pattern', where);
    if (pattern === '') fail(`${where}.pattern`, 'must not be empty');
    if (pattern !== undefined) {
      checkRegex(pattern, 'g', `${where}.pattern`);
      if (p.ignore === true) fail(where, '"pattern" masks inside the value, "ignore" drops the field: use one');
    }
    const type = optString(p, 'type', where);
    if (type !== undefined && !['string', 'number', 'boolean'].includes(type)) fail(`${where}.type`, `must be "string", "number" or "boolean", got ${JSON.stringify(type)}`);
    if (type !== undefined && pattern === undefined) fail(where, '"type" says which values a "pattern" masks: give the pattern too');
    return { where: optString(p, 'where', where), path: needString(p, 'path', where), replace: optString(p, 'replace', where), ...(pattern !== undefined ? { pattern } : {}), ...(type !== undefined ? { type: type as PathRuleConfig['type'] } : {}), ignore: p.ignore === true };
  });
  const unorderedArrays = list(n.unorderedArrays, `${file} normalize.unorderedArrays`).map((u, i) => {
    if (typeof u !== 'string' || !u) fail(`${file} normalize.unorderedArrays[${i}]`, 'must be a field path like "response.body.tags"');
    return u;
  });
  const proto = protoFiles(n.proto, file);
  let serverHome: string | string[] | undefined;
  if (n.serverHome !== undefined) {
    if (typeof n.serverHome === 'string') serverHome = n.serverHome;
    else serverHome = list(n.serverHome, `${file} normalize.serverHome`).map((s, i) => {
      if (typeof s !== 'string') fail(`${file} normalize.serverHome[${i}]`, 'must be a path');
      return s;
    });
  }

  const pr = doc.pairing ?? {};
  if (!isObj(pr)) fail(`${file} pairing`, 'must be an object');
  onlyKeys(pr, ['keys', 'disable', 'unordered', 'arrayKeys', 'wsOrder'], `${file} pairing`);
  const routeKeys = list(pr.keys, `${file} pairing.keys`).map((k, i) => {
    const where = `${file} pairing.keys[${i}]`;
    if (!isObj(k)) fail(where, 'must be an object like {"route": "POST /graphql", "by": "graphql"}');
    onlyKeys(k, ['route', 'by'], where);
    const by = needString(k, 'by', where);
    if (!['graphql', 'jsonrpc', 'body-hash'].includes(by) && !/^body:[^\s]+$/.test(by) && !/^query:[^\s]+$/.test(by) && !/^header:[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(by)) {
      fail(`${where}.by`, `unknown key ${JSON.stringify(by)}; use graphql, jsonrpc, body-hash, body:<field>, query:<parameter> or header:<name>`);
    }
    return { route: needString(k, 'route', where), by };
  });
  const disableKeys = list(pr.disable, `${file} pairing.disable`).map((name, i) => {
    if (typeof name !== 'string' || !(KEY_DETECTORS as readonly string[]).includes(name)) {
      fail(`${file} pairing.disable[${i}]`, `unknown key detector ${JSON.stringify(name)}; built-in detectors: ${KEY_DETECTORS.join(', ')}`);
    }
    return name as string;
  });
  const unordered = list(pr.unordered, `${file} pairing.unordered`).map((u, i) => {
    if (typeof u !== 'string') fail(`${file} pairing.unordered[${i}]`, 'must be a route glob like "GET /v1/items/*"');
    return u;
  });

  const arrayKeys = list(pr.arrayKeys, `${file} pairing.arrayKeys`).map((k, i) => {
    const where = `${file} pairing.arrayKeys[${i}]`;
    if (!isObj(k)) fail(where, 'must be an object like {"path": "response.body.items", "key": "sku"}');
    onlyKeys(k, ['path', 'key'], where);
    return { path: needString(k, 'path', where), key: needString(k, 'key', where) };
  });
  const wsOrder = pr.wsOrder;
  if (wsOrder !== undefined && wsOrder !== 'direction' && wsOrder !== 'total') {
    fail(`${file} pairing.wsOrder`, `must be "direction" (each direction's order) or "total" (the interleaving too); got ${JSON.stringify(wsOrder)}`);
  }

  const known = list(doc.known, `${file} known`).map((k, i) => {
    const where = `${file} known[${i}]`;
    if (!isObj(k)) fail(where, 'must be an object with where, path and reason');
    onlyKeys(k, ['where', 'path', 'kind', 'old', 'new', 'oldShape', 'newShape', 'reason', 'since', 'tracking'], where);
    const reason = optString(k, 'reason', where);
    if (!reason || !reason.trim()) fail(where, 'needs a "reason": say why this difference is accepted');
    const kind = optString(k, 'kind', where);
    if (kind !== undefined && !KINDS.includes(kind as DifferenceKind)) fail(`${where}.kind`, `must be one of ${KINDS.join(', ')}`);
    return {
      where: knownWhere(k.where, where),
      path: optString(k, 'path', where) ?? '',
      ...(kind ? { kind: kind as DifferenceKind } : {}),
      ...knownValues(k, where),
      reason,
      ...(k.since !== undefined ? { since: optString(k, 'since', where) } : {}),
      ...(k.tracking !== undefined ? { tracking: optString(k, 'tracking', where) } : {}),
    } as KnownConfig;
  });

  return Object.freeze({
    normalize: { disable, keys, patterns, headers, keep, paths, serverHome, unorderedArrays, ...(proto.length ? { proto } : {}) },
    pairing: { keys: routeKeys, ...(disableKeys.length ? { disable: disableKeys } : {}), unordered, arrayKeys, ...(wsOrder ? { wsOrder: wsOrder as PairingConfig['wsOrder'] } : {}) },
    known,
  });
}

/**
 * `normalize.proto`: a path or a list of paths, relative to the config file,
 * resolved and parsed now so a missing or broken file stops the run up front.
 */
function protoFiles(v: unknown, file: string): string[] {
  const where = `${file} normalize.proto`;
  const raw = typeof v === 'string' ? [v] : list(v, where);
  const files = raw.map((p, i) => {
    if (typeof p !== 'string' || !p) fail(`${where}[${i}]`, 'must be the path of a .proto file like "protos/echo.proto"');
    return resolve(dirname(file), p);
  });
  if (files.length) parsedProtos.set(files, ProtoSchema.load(files, `config ${where}`));
  return files;
}

/** The schema each validated config's `normalize.proto` list was parsed to (validation parses it to fail early; configProtoSchema reuses it). */
const parsedProtos = new WeakMap<readonly string[], ProtoSchema>();

/**
 * The config's `.proto` files (normalize.proto) parsed, for everything that
 * decodes gRPC messages with them: the diff, and the displays that name
 * fields (`bb frames`, `bb show`, the live view). Undefined when it lists none.
 */
export function configProtoSchema(config: DiffConfig): ProtoSchema | undefined {
  const files = config.normalize.proto ?? [];
  return files.length ? (parsedProtos.get(files) ?? ProtoSchema.load(files, 'config normalize.proto')) : undefined;
}

/** The `.proto` files a config file names, parsed (configProtoSchema); a bad file is a one-line BB_CONFIG_INVALID. */
export async function loadConfigProtoSchema(path: string): Promise<ProtoSchema | undefined> {
  return configProtoSchema(await loadDiffConfig(path));
}

/** A known entry's `where`: a glob, or a non-empty list of globs (default "*"). */
function knownWhere(v: unknown, where: string): string | string[] {
  if (v === undefined) return '*';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((g) => typeof g === 'string')) return v as string[];
  fail(`${where}.where`, 'must be a glob over entry ids like "*/GET /v1/items#*", or a list of them');
}

/**
 * A known entry's recorded values (docs/diff.md "Triage: known differences,
 * noise, `bb known add`, `bb noise`"): `old` / `new` any JSON value,
 * `oldShape` / `newShape` a shape name, one of the two per side.
 */
function knownValues(k: Record<string, unknown>, where: string): KnownValues {
  const out: KnownValues = {};
  for (const side of ['old', 'new'] as const) {
    const shapeKey = `${side}Shape` as const;
    const shape = optString(k, shapeKey, where);
    if (shape !== undefined && !isShapeName(shape)) fail(`${where}.${shapeKey}`, `must be a shape: ${TYPE_SHAPES.join(', ')} or a placeholder like "<UUID>"; got ${JSON.stringify(shape)}`);
    if (side in k && shape !== undefined) fail(where, `has both "${side}" and "${shapeKey}": keep the value or the shape`);
    if (side in k) out[side] = k[side];
    if (shape !== undefined) out[shapeKey] = shape;
  }
  return out;
}

