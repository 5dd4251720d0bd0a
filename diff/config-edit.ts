// Writing triage into a config file: `bb known add` and the live view of
// `bb shadow --ui` add known entries and `normalize.paths` rules (what
// `bb noise` proposes) to the --config file through here, so both write the
// same entries the same way: the file's other keys and indentation kept, an
// entry already there not written twice, the result validated as a config
// before it replaces the file, atomically (capture/out-file.ts: a reader
// never sees half a config).
import { readFile, stat } from 'node:fs/promises';
import { writeOutFile } from '../capture/index.js';
import { BbError, oneLine } from '../core/index.js';
import { validateDiffConfig, type KnownConfig, type PathRuleConfig } from './config.js';
import { addKnownToConfigText, detectIndent } from './triage-rules.js';

/** What to add to a config. */
export interface ConfigAdditions {
  /** Known entries (`known`). */
  known?: KnownConfig[];
  /** Path rules (`normalize.paths`). */
  paths?: PathRuleConfig[];
}

/** Per addition, in order: true when written, false when an equal one was already there. */
export interface ConfigAdded {
  known: boolean[];
  paths: boolean[];
}

/** Adds a `normalize.paths` rule to a config's text (or a new config); undefined when an equal rule is already there. */
export function addPathRuleToConfigText(text: string | undefined, rule: PathRuleConfig): string | undefined {
  const doc = text === undefined || text.trim() === '' ? {} : (JSON.parse(text.replace(/^\uFEFF/, '')) as Record<string, unknown>);
  const normalize = doc.normalize && typeof doc.normalize === 'object' ? (doc.normalize as Record<string, unknown>) : {};
  const paths = Array.isArray(normalize.paths) ? (normalize.paths as PathRuleConfig[]) : [];
  if (paths.some((p) => JSON.stringify(p) === JSON.stringify(rule))) return undefined;
  doc.normalize = { ...normalize, paths: [...paths, rule] };
  return `${JSON.stringify(doc, null, text ? detectIndent(text) : 2)}\n`;
}

/**
 * Adds known entries and path rules to the config file at `path` (created when
 * absent). Throws BB_FILE_UNREADABLE when it cannot be read, BB_CONFIG_INVALID
 * when it is not JSON, and validation's error when the result is no config.
 */
export async function addToConfigFile(path: string, additions: ConfigAdditions): Promise<ConfigAdded> {
  let original: string | undefined;
  let mode = 0o644;
  try {
    original = await readFile(path, 'utf8');
    mode = (await stat(path)).mode & 0o777;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') throw new BbError('BB_FILE_UNREADABLE', `cannot read config ${path} (${code}): check the path.`);
  }
  let text = original;
  const added: ConfigAdded = { known: [], paths: [] };
  const apply = (edit: (t: string | undefined) => string | undefined): boolean => {
    let next: string | undefined;
    try {
      next = edit(text);
    } catch (err) {
      throw new BbError('BB_CONFIG_INVALID', `config ${path} is not valid JSON (${oneLine((err as Error).message)}): fix the file.`);
    }
    if (next === undefined) return false;
    text = next;
    return true;
  };
  for (const k of additions.known ?? []) added.known.push(apply((t) => addKnownToConfigText(t, k)));
  for (const p of additions.paths ?? []) added.paths.push(apply((t) => addPathRuleToConfigText(t, p)));
  if (text !== original) {
    validateDiffConfig(JSON.parse(text!), path);
    await writeOutFile(path, text!, { force: true, mode, what: '--config' });
  }
  return added;
}
