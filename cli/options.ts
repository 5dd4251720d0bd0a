// Options shared by several commands, parsed once with sentences that say what to type.
import type { Argv } from 'yargs';
import { parseRedactSpecs, type RedactConfig } from '../capture/index.js';
import { BbError } from '../core/index.js';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

/** Parses "16MiB", "512k", "1048576". */
export function parseByteSize(value: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new BbError('BB_BAD_SIZE', `${flag} needs a size like 16MiB, 512KiB or 1048576, got '${value}'`);
  return Math.floor(Number(m[1]) * unit);
}

/** A duration flag's value (`250ms`, `30s`, `10m`, `1h`) in ms; undefined when it is not one (each flag says what it takes). */
export function durationMs(text: string): number | undefined {
  const d = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text);
  return d ? Number(d[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[d[2] as 'ms' | 's' | 'm' | 'h'] : undefined;
}

/** `--rotate 64MB|512KiB|10m|30s`: a segment's size (as parseByteSize) or age; 0 or anything else is one line, exit 2. */
export function parseRotate(value: unknown): { bytes: number } | { ms: number } {
  const text = String(value).trim();
  const ms = durationMs(text);
  let n = ms ?? NaN;
  if (ms === undefined) {
    try {
      n = parseByteSize(text, '--rotate');
    } catch {
      // Said below, with what --rotate takes.
    }
  }
  if (!(n >= 1)) throw new BbError('BB_BAD_ROTATE', `--rotate needs a segment size (64MB, 512KiB) or a duration (10m, 30s) above 0, got '${text}'`);
  return ms !== undefined ? { ms: n } : { bytes: n };
}

/** Adds --redact and --no-redact (read back with redactOptionsFrom); `where` names the capture they apply to (" in the new capture"). */
export function withRedactOptions(y: Argv, where = ''): Argv {
  return y
    .option('redact', { type: 'string', array: true, describe: `also redact header:NAME, query:NAME or json:KEY${where}` })
    .option('no-redact', { type: 'boolean', describe: `keep secrets as they are${where} (captures then hold credentials)` });
}

/** The redaction settings from --no-redact / --redact kind:NAME. */
export function redactOptionsFrom(argv: Record<string, unknown>): RedactConfig | false | undefined {
  // --redact is an array flag, so yargs turns --no-redact into `redact: [false]`.
  const given = argv.redact === undefined ? [] : ([] as unknown[]).concat(argv.redact);
  const off = argv['no-redact'] === true || given.includes(false);
  const extra = given.filter((x): x is string => typeof x === 'string');
  if (off && extra.length > 0) throw new BbError('BB_BAD_REDACT', `--no-redact and --redact ${extra[0]} contradict each other: give one of them`);
  if (off) return false;
  if (!extra || extra.length === 0) return undefined;
  try {
    return parseRedactSpecs(extra);
  } catch (err) {
    throw new BbError('BB_BAD_REDACT', (err as Error).message);
  }
}

/** The values of a repeatable flag (`--header a --header b`, or one), as strings. */
export function flagValues(values: unknown): string[] {
  return (values === undefined ? [] : Array.isArray(values) ? values : [values]).map(String);
}

/** Parses one 'Name: value' (a --header flag's text); `example` shows the flag as the user would fix it. */
export function parseHeaderFlag(text: string, example = "--header 'Authorization: Bearer …'"): [string, string] {
  const colon = text.indexOf(':');
  const name = colon > 0 ? text.slice(0, colon).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new BbError('BB_BAD_HEADER', `--header needs 'Name: value' like ${example}, got '${text}'`);
  return [name, text.slice(colon + 1).trim()];
}

/** Parses --header 'Name: value' flags. */
export function parseHeaderFlags(values: unknown): Array<[string, string]> {
  return flagValues(values).map((v) => parseHeaderFlag(v));
}
