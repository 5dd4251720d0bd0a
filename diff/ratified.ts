// What a ratification fixes (docs/diff.md "Triage: known differences, noise,
// `bb known add`, `bb noise`"). `bb known add` records on the known entry the
// values of the changed rows it ratifies, per side: the value when every row
// held the same one (`old` / `new`, as normalized, ordinal numbers dropped so
// `<UUID:3>` and `<UUID:7>` are one value), else the shape the rows shared
// (`oldShape` / `newShape`: "number", "string", "<UUID>", …), else nothing for
// that side. A later row at the same place with other values is real again.
// `changed` rows record both sides, `added` rows the new one: a field the
// new build sends is ratified with what it sent, so a later build that sends
// something else there is real again (an added `"role": "user"` does not
// pass a later `"role": "admin"`). A removed field's old value is the old
// build's, not a behaviour of the new one, and an entry missing or extra is
// one finding whatever it held: those ratify the presence. An entry without
// values (written by hand) matches any value. Pure.
import { canonical } from '../core/index.js';
import type { DifferenceKind, KnownValues } from './types.js';

/** Shape names of JSON types; a value that is one placeholder has the placeholder's name instead (`<UUID>`). */
export const TYPE_SHAPES: readonly string[] = ['null', 'boolean', 'number', 'string', 'array', 'object'];

const PLACEHOLDER = /^<([A-Z][A-Z0-9_]*)(?::\d+)?>$/;

/** True for a name `oldShape` / `newShape` may hold. */
export function isShapeName(s: string): boolean {
  return TYPE_SHAPES.includes(s) || /^<[A-Z][A-Z0-9_]*>$/.test(s);
}

/** A value's shape: its JSON type, or the placeholder it is (`"<UUID:3>"` → `<UUID>`); undefined for no value. */
export function valueShape(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') {
    const m = PLACEHOLDER.exec(v);
    return m ? `<${m[1]}>` : 'string';
  }
  return typeof v;
}

// Ordinal numbers dropped, as findings compare values: `<UUID:3>` → `<UUID>`.
function unnumberText(json: string): string {
  return json.replace(/<([A-Z][A-Z0-9_]*):\d+>/g, '<$1>');
}

/** A value with the ordinal numbers of its placeholders dropped (what a known entry records). */
export function unnumbered(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(unnumberText(JSON.stringify(v)));
}

function sameValue(a: unknown, b: unknown): boolean {
  return a !== undefined && b !== undefined && unnumberText(canonical(a)) === unnumberText(canonical(b));
}

// One side of the rows: the value they all hold, else the shape they all have, else nothing.
function recordSide(values: unknown[], side: 'old' | 'new'): KnownValues {
  const first = values[0];
  if (first === undefined || values.some((v) => v === undefined)) return {};
  if (values.every((v) => sameValue(v, first))) return { [side]: unnumbered(first) };
  const shapes = new Set(values.map(valueShape));
  return shapes.size === 1 ? { [`${side}Shape`]: [...shapes][0]! } : {};
}

/** What a known entry records of the rows it ratifies: values (or shapes) of `changed` rows, the new side of `added` ones, nothing for other kinds. */
export function recordValues(kind: DifferenceKind, rows: ReadonlyArray<{ old?: unknown; new?: unknown }>): KnownValues {
  if (rows.length === 0) return {};
  if (kind === 'added') return recordSide(rows.map((r) => r.new), 'new');
  if (kind !== 'changed') return {};
  return { ...recordSide(rows.map((r) => r.old), 'old'), ...recordSide(rows.map((r) => r.new), 'new') };
}

/** The recorded values of a known entry (or a broken ratification), without its other fields. */
export function knownValuesOf(k: KnownValues): KnownValues {
  return {
    ...('old' in k ? { old: k.old } : {}),
    ...('new' in k ? { new: k.new } : {}),
    ...(k.oldShape !== undefined ? { oldShape: k.oldShape } : {}),
    ...(k.newShape !== undefined ? { newShape: k.newShape } : {}),
  };
}

function sideMatches(k: KnownValues, side: 'old' | 'new', v: unknown): boolean {
  if (side in k && !sameValue(k[side], v)) return false;
  const shape = side === 'old' ? k.oldShape : k.newShape;
  return shape === undefined || valueShape(v) === shape;
}

/** True when a row's values are what the known entry recorded (always, for an entry that recorded none). */
export function valuesMatch(k: KnownValues, d: { old?: unknown; new?: unknown }): boolean {
  return sideMatches(k, 'old', d.old) && sideMatches(k, 'new', d.new);
}

/** What a known entry of `kind` fixed, as text: `201 → 200` (a change), `"1"` (an added field's value); undefined when it recorded nothing. */
export function ratifiedValuesText(kind: DifferenceKind | undefined, k: KnownValues): string | undefined {
  const [a, b] = ratifiedSides(k);
  if (a === '*' && b === '*') return undefined;
  return kind === 'added' ? b : `${a} → ${b}`;
}

/** Each side of what was ratified as text: the value's JSON, `(shape)`, or `*` (any). */
export function ratifiedSides(k: KnownValues): [string, string] {
  const side = (s: 'old' | 'new') => {
    const shape = s === 'old' ? k.oldShape : k.newShape;
    return s in k ? (JSON.stringify(k[s]) ?? 'null') : shape !== undefined ? `(${shape})` : '*';
  };
  return [side('old'), side('new')];
}
