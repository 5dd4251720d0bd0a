// Headers as the wire had them: Node's flat rawHeaders list
// ([name, value, name, value, ...]), order, case and duplicates kept. The one
// lookup, the one pair list, the one HTTP/1.x head serializer.

/** One header as a name/value pair (HAR's shape). */
export interface HeaderPair {
  name: string;
  value: string;
}

/** Flat rawHeaders → ordered name/value pairs, duplicates kept. */
export function headerPairs(raw: readonly string[]): HeaderPair[] {
  const out: HeaderPair[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push({ name: raw[i]!, value: raw[i + 1]! });
  return out;
}

/** The first value of a header, its name matched case-insensitively. */
export function headerValue(raw: readonly string[], name: string): string | undefined {
  const lower = name.toLowerCase();
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === lower) return raw[i + 1];
  return undefined;
}

/** Every value of a header, in order. */
export function headerValues(raw: readonly string[], name: string): string[] {
  const lower = name.toLowerCase();
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === lower) out.push(raw[i + 1]!);
  return out;
}

/** The first value of a header in a name/value list (HAR's headers), its name matched case-insensitively. */
export function pairValue(pairs: readonly HeaderPair[] | undefined, name: string): string | undefined {
  if (pairs === undefined) return undefined;
  const lower = name.toLowerCase();
  for (const p of pairs) if (p.name.toLowerCase() === lower) return p.value;
  return undefined;
}

/** Every value of a header in a name/value list, in order. */
export function pairValues(pairs: readonly HeaderPair[] | undefined, name: string): string[] {
  if (pairs === undefined) return [];
  const lower = name.toLowerCase();
  return pairs.filter((p) => p.name.toLowerCase() === lower).map((p) => p.value);
}

/** An HTTP/1.x head as written on a socket: start line, "name: value" lines, blank line (latin1 text). */
export function serializeHead(startLine: string, raw: readonly string[]): string {
  let head = startLine + '\r\n';
  for (let i = 0; i + 1 < raw.length; i += 2) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return head + '\r\n';
}
