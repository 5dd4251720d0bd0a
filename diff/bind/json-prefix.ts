// The complete part of a JSON text cut short. `bb shadow` keeps only the
// first 256 KiB of the primary's answer for binding (scenario/shadow/tee.ts),
// so a bigger answer's text ends mid-value and does not parse; the values it
// issued before the cut (a created order's id, first in its answer) must
// still bind, at the same places as in the target's whole answer. Read only
// for a text known to be cut: no answer kept whole pays for it.

/**
 * The value of `text` (JSON, cut anywhere) up to its last complete member or
 * element, the containers left open closed; undefined when nothing before the
 * cut is complete.
 */
export function parseJsonPrefix(text: string): { value: unknown } | undefined {
  const start = text.search(/[[{]/);
  if (start < 0) return undefined;
  const open: string[] = [];
  let inString = false;
  let cut = -1;
  let closers = '';
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') open.push(c === '{' ? '}' : ']');
    else if (c === '}' || c === ']') {
      open.pop();
      // A container closed: everything up to here is complete.
      cut = i + 1;
      closers = open.slice().reverse().join('');
      if (open.length === 0) break;
    } else if (c === ',') {
      // The member or element before a comma is complete.
      cut = i;
      closers = open.slice().reverse().join('');
    }
  }
  if (cut < 0) return undefined;
  try {
    return { value: JSON.parse(text.slice(start, cut) + closers) };
  } catch {
    return undefined;
  }
}
