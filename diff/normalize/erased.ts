// Notes of what a config rule erased (docs/diff.md "Config"): a rule that
// replaces or drops a whole value (`normalize.paths` without a `pattern`, a
// `normalize.keys` rule, a `normalize.headers` mask) hides whatever differed
// there, so it notes each place it erased with a digest of the value it
// found. The stores keep the notes on the entry's summary; rule-hidden.ts
// compares a pair's two sides and counts the rows each rule hid.
import { hash } from 'node:crypto';

/** What an erasing rule found at one place: `rule id, tab, path, tab, digest of the value` (un-numbered). */
export type ErasedNote = string;

/** Which config rule erased: `paths[0]`, `keys[1]`, `headers[0]` (the config's list and index). */
export type ErasingRuleId = string;

/** The notes of one entry from normalizing (key rules, header masks) and from the path rules after it, either or both absent. */
export function bothErased(a: ErasedNote[] | undefined, b: ErasedNote[] | undefined): ErasedNote[] | undefined {
  return a && b ? [...a, ...b] : a ?? b;
}

/**
 * The note for one erased value: `unnumberText` drops ordinal numbers, so
 * one id numbered apart on each side reads alike.
 */
export function erasedNote(rule: ErasingRuleId, path: string, value: unknown, unnumberText: (s: string) => string): ErasedNote {
  return `${rule}\t${path}\t${hash('sha1', unnumberText(JSON.stringify(value) ?? ''), 'base64')}`;
}
