// Seeded mutations of capture files for the fuzz loop: the same seed always
// gives the same mutant. Text mutations break JSON (flip, cut, splice);
// structural ones keep JSON but change a value, a key or an array.
import { prng } from '../helpers/scripted-upstream.js';

/** A seeded random source with helpers. */
export class Rand {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  /** A float in [0, 1). */
  float(): number {
    return this.next();
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** One of the items. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const ODD_STRINGS = [
  '', ' ', '\u0000', '\ud800', '💥', '<script>alert(1)</script>', '../../etc/passwd', 'javascript:alert(1)', '%00', '\r\n\r\n',
  'A'.repeat(5000), '{"json":"inside"}', 'null', '-1', 'NaN', 'base64!!', '=', '==', '====', 'AAAA', 'http://', '//',
  '2026-13-45T99:99:99Z', 'session_00000000-0000-0000-0000-000000000000', '127.0.0.1:0', '\\', '"', "'", '__proto__', 'constructor',
];
const ODD_NUMBERS = [0, -1, -0.5, 1e308, -1e308, 2 ** 53, 2 ** 31, 1.5, 101, 599, 1000, 1e11, 1e13, 100000];

/** A random JSON value of a random kind (small). */
export function randomValue(r: Rand, depth = 0): unknown {
  switch (r.int(depth > 1 ? 5 : 7)) {
    case 0: return r.pick(ODD_STRINGS);
    case 1: return r.pick(ODD_NUMBERS);
    case 2: return r.pick([true, false]);
    case 3: return null;
    case 4: return r.pick(ODD_STRINGS) + r.int(1000);
    case 5: return [randomValue(r, depth + 1), randomValue(r, depth + 1)];
    default: return { [r.pick(['name', 'value', 'text', 'size', 'time', 'type', 'opcode', 'data', '_bb', 'seq', '__proto__'])]: randomValue(r, depth + 1) };
  }
}

type Container = Record<string, unknown> | unknown[];

/** Every container in a JSON value with its keys (to pick a mutation site). */
function sites(v: unknown, out: Array<{ parent: Container; key: string | number }> = []): typeof out {
  if (Array.isArray(v)) v.forEach((x, i) => (out.push({ parent: v, key: i }), sites(x, out)));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push({ parent: v as Record<string, unknown>, key: k }), sites(x, out);
  return out;
}

/** One structural mutation, in place; returns what it did. */
export function mutateStructure(doc: unknown, r: Rand): string {
  const all = sites(doc);
  if (all.length === 0) return 'nothing to mutate';
  const { parent, key } = r.pick(all);
  const get = () => (parent as Record<string | number, unknown>)[key];
  const set = (v: unknown) => ((parent as Record<string | number, unknown>)[key] = v);
  switch (r.int(9)) {
    case 0:
      set(randomValue(r));
      return `replaced ${String(key)}`;
    case 1:
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      return `deleted ${String(key)}`;
    case 2: {
      const v = get();
      if (Array.isArray(parent)) parent.splice(key as number, 0, structuredClone(v));
      else set([v, v]);
      return `duplicated ${String(key)}`;
    }
    case 3: {
      const v = get();
      if (typeof v === 'string') set(v.length > 0 ? v.slice(0, r.int(v.length)) + r.pick(ODD_STRINGS) + v.slice(r.int(v.length)) : r.pick(ODD_STRINGS));
      else if (typeof v === 'number') set(r.pick(ODD_NUMBERS));
      else set(r.pick(ODD_STRINGS));
      return `edited ${String(key)}`;
    }
    case 4: {
      if (Array.isArray(parent) && parent.length > 1) {
        const j = r.int(parent.length);
        [parent[key as number], parent[j]] = [parent[j], parent[key as number]];
        return `swapped ${String(key)} and ${j}`;
      }
      set(null);
      return `nulled ${String(key)}`;
    }
    case 5:
      set(typeof get() === 'string' ? Number.NaN : String(get()));
      return `retyped ${String(key)}`;
    case 6:
      if (!Array.isArray(parent)) {
        parent[r.pick(['_extra', 'encoding', '_bb', 'comment', 'mimeType', 'text', 'complete'])] = randomValue(r);
        return 'added a key';
      }
      parent.push(randomValue(r));
      return 'appended an item';
    case 7: {
      // A plausible base64 body that is not base64, or a real one.
      if (!Array.isArray(parent)) {
        parent.encoding = 'base64';
        parent.text = r.pick(['AAEC', '!!!', 'AAE', 'QUJD\nREVG', '', 'A']);
        return 'base64 body';
      }
      set(undefined);
      return 'undefined item';
    }
    default:
      set(get() === null ? {} : Array.isArray(get()) ? {} : []);
      return `container swap ${String(key)}`;
  }
}

/** One text-level mutation (usually breaks JSON). */
export function mutateText(text: string, r: Rand): { text: string; what: string } {
  const at = r.int(text.length);
  switch (r.int(6)) {
    case 0:
      return { text: text.slice(0, at), what: `truncated at ${at}` };
    case 1:
      return { text: text.slice(0, at) + text.slice(at + 1 + r.int(40)), what: `deleted near ${at}` };
    case 2:
      return { text: text.slice(0, at) + r.pick(['{', '}', '[', ']', '"', ',', ':', '\\', '\u0000', 'null', '-']) + text.slice(at), what: `inserted at ${at}` };
    case 3: {
      const c = text.charCodeAt(at) ^ (1 << r.int(7));
      return { text: text.slice(0, at) + String.fromCharCode(c) + text.slice(at + 1), what: `flipped a bit at ${at}` };
    }
    case 4: {
      const from = r.int(text.length);
      return { text: text.slice(0, at) + text.slice(from, from + r.int(200)) + text.slice(at), what: `spliced ${from} into ${at}` };
    }
    default:
      return { text: '\ufeff' + text.slice(at), what: `BOM + tail from ${at}` };
  }
}
