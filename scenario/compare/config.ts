// The `bb compare` config: one JSON file with `servers`, `scenario` and the
// diff's own keys (`normalize`, `pairing`, `known`, validated by diff/).
// Read and validated once, up front; relative paths resolve against the
// config file's folder; every mistake names its key (exit 2).
//
//     {
//       "servers": {
//         "old": { "repo": "..", "ref": "v1.4.0", "install": "npm ci", "command": "node", "args": ["server.js"] },
//         "new": { "command": "node", "args": ["server.js"], "cwd": "..", "ready": { "line": "^READY " } }
//       },
//       "scenario": "scenario.ts",
//       "known": [{ "where": "errors/*", "path": "response.body.error.stack", "reason": "..." }]
//     }
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { onlyKeys, parseConfigJson, validateDiffConfig, type DiffConfig } from '../../diff/index.js';
import type { ReadinessSpec, ServerSpec } from './boot/spec.js';
import { BbError, unreadableWhy } from '../../core/index.js';

/** Which tree a run slot uses. */
export type TreeName = 'old' | 'new';

/** A validated compare config. */
export interface CompareConfig {
  /** Absolute path of the config file. */
  readonly file: string;
  /** The two servers, paths resolved. */
  readonly servers: Readonly<Record<TreeName, ServerSpec>>;
  /** Absolute path of the scenario module, or of a capture (.har) to replay as the scenario. */
  readonly scenario: string;
  /** replay.values: redacted client secrets for a replayed capture (by placeholder or field name). */
  readonly replayValues?: Readonly<Record<string, string>>;
  /** Default bound per scenario step (ms), when set. */
  readonly stepTimeoutMs?: number;
  /** The diff's part of the file. */
  readonly diff: DiffConfig;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function bad(file: string, where: string, what: string): never {
  throw new BbError('BB_CONFIG_INVALID', `config ${file} ${where}: ${what}`);
}

function str(o: Obj, key: string, file: string, where: string, required = false): string | undefined {
  const v = o[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v === '') bad(file, where ? `${where}.${key}` : key, 'must be a non-empty string');
  return v;
}

function num(o: Obj, key: string, file: string, where: string): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) bad(file, where ? `${where}.${key}` : key, 'must be a positive integer');
  return v;
}

function parseReady(v: unknown, file: string, where: string): ReadinessSpec | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) bad(file, where, 'must be an object like {"line": "^READY "}, {"port": 3000} or {"health": "/healthz"}');
  onlyKeys(v, ['line', 'port', 'health'], `${file} ${where}`);
  const line = str(v, 'line', file, where);
  if (line !== undefined) {
    try {
      new RegExp(line);
    } catch (err) {
      bad(file, `${where}.line`, `is not a valid regex (${(err as Error).message})`);
    }
  }
  const port = num(v, 'port', file, where);
  const health = str(v, 'health', file, where);
  if (line === undefined && port === undefined && health === undefined) bad(file, where, 'needs line, port or health');
  return { ...(line !== undefined ? { line } : {}), ...(port !== undefined ? { port } : {}), ...(health !== undefined ? { health } : {}) };
}

function parseServer(v: unknown, file: string, dir: string, name: TreeName): ServerSpec {
  const where = `servers.${name}`;
  if (!isObj(v)) bad(file, where, 'must be an object with "command" (and "args", "cwd", "env"), or "repo" + "ref" + "command"');
  onlyKeys(v, ['command', 'args', 'env', 'ready', 'bootTimeoutMs', 'cwd', 'repo', 'ref', 'install'], `${file} ${where}`);
  const command = str(v, 'command', file, where, true)!;
  let args: string[] | undefined;
  if (v.args !== undefined) {
    if (!Array.isArray(v.args) || v.args.some((a) => typeof a !== 'string')) bad(file, `${where}.args`, 'must be an array of strings');
    args = v.args as string[];
  }
  let env: Record<string, string> | undefined;
  if (v.env !== undefined) {
    if (!isObj(v.env) || Object.values(v.env).some((x) => typeof x !== 'string')) bad(file, `${where}.env`, 'must map names to string values');
    env = v.env as Record<string, string>;
  }
  const base = {
    command,
    ...(args ? { args } : {}),
    ...(env ? { env } : {}),
    ...(v.ready !== undefined ? { ready: parseReady(v.ready, file, `${where}.ready`) } : {}),
    ...(v.bootTimeoutMs !== undefined ? { bootTimeoutMs: num(v, 'bootTimeoutMs', file, where) } : {}),
  };
  const cwd = str(v, 'cwd', file, where);
  if (v.repo !== undefined || v.ref !== undefined) {
    const repo = str(v, 'repo', file, where, true)!;
    const ref = str(v, 'ref', file, where, true)!;
    const install = str(v, 'install', file, where);
    if (cwd !== undefined && isAbsolute(cwd)) bad(file, `${where}.cwd`, 'must be relative to the worktree for a git-ref server');
    return { ...base, repo: resolve(dir, repo), ref, ...(install ? { install } : {}), ...(cwd ? { cwd } : {}) };
  }
  if (v.install !== undefined) bad(file, `${where}.install`, 'only applies to git-ref servers (with "repo" and "ref")');
  return { ...base, cwd: resolve(dir, cwd ?? '.') };
}

/** Reads and validates a compare config file; throws exit 2 naming the problem. */
export async function loadCompareConfig(path: string): Promise<CompareConfig> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new BbError('BB_CONFIG_MISSING', `config ${file} cannot be read (${unreadableWhy(err)}): pass --config with the path of your bb.config.json.`);
  }
  return parseCompareConfig(parseConfigJson(text, file), file);
}

/** Validates a parsed compare config; `file` names it and anchors relative paths. */
export function parseCompareConfig(doc: unknown, file: string): CompareConfig {
  const dir = dirname(file);
  if (!isObj(doc)) bad(file, 'top level', 'must be a JSON object with servers, scenario and the diff keys');
  if (!isObj(doc.servers)) bad(file, 'servers', 'must be an object with "old" and "new" servers');
  onlyKeys(doc.servers, ['old', 'new'], `${file} servers`);
  const servers = { old: parseServer(doc.servers.old, file, dir, 'old'), new: parseServer(doc.servers.new, file, dir, 'new') };
  const scenario = resolve(dir, str(doc, 'scenario', file, '', true)!);
  const stepTimeoutMs = num(doc, 'stepTimeoutMs', file, '');
  const diff = validateDiffConfig(doc, file);
  const replayValues = parseReplayValues(doc.replay, file);
  return Object.freeze({ file, servers: Object.freeze(servers), scenario, ...(stepTimeoutMs ? { stepTimeoutMs } : {}), ...(replayValues ? { replayValues } : {}), diff });
}

/** `"replay": { "values": { "password": "…" } }`: strings only (the compare config and bb replay --config share this rule). */
export function parseReplayValues(v: unknown, file: string): Readonly<Record<string, string>> | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) bad(file, 'replay', 'must be an object like { "values": { "password": "…" } }');
  onlyKeys(v, ['values'], `${file} replay`);
  if (v.values === undefined) return undefined;
  if (!isObj(v.values) || Object.values(v.values).some((x) => typeof x !== 'string')) bad(file, 'replay.values', 'must map field names or <redacted:…> placeholders to strings');
  return Object.freeze({ ...(v.values as Record<string, string>) });
}

