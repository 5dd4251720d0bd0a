// Values an HTML page hands its client (docs/diff.md "Issued values"): the
// page's text is prose (prose.ts), but some of its attributes are data the
// browser sends back: a form's hidden fields (a CSRF token: Rails'
// `authenticity_token`, Django's `csrfmiddlewaretoken`, Laravel's `_token`),
// a `<meta>`'s content (`csrf-token`, read by scripts into a header), the
// targets of its links and forms (`/orders/1042/edit`). Each is read at a
// place named by its element, so the primary's page and a target's page
// name the same slot alike: `input[authenticity_token]`, `meta[csrf-token]`,
// `a#3` (the fourth link), `form#0` (the first form).
// Tags are found by one linear scan, not a parser: a page is hostile input,
// and only these four elements' attributes are read.

/** One attribute value an HTML page carries, at its place, entities decoded. */
export interface HtmlValue {
  place: string;
  value: string;
}

/** Pages longer than this (characters) are read up to it. */
const MAX_HTML = 1024 * 1024;
/** Values read from one page, at most. */
const MAX_VALUES = 2_000;

/** The elements whose attributes are read. */
const TAG_NAME = /^(input|meta|a|form)(?=[\s/>])/i;
const ATTRIBUTE = /([^\s"'=<>/`]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** True for a body that is an HTML page (by its media type, else by its start). */
export function isHtml(text: string, contentType: string | undefined): boolean {
  if (contentType !== undefined && /^\s*(text\/html|application\/xhtml\+xml)\s*(;|$)/i.test(contentType)) return true;
  return contentType === undefined && /^\s*<(!doctype html|html)[\s>]/i.test(text);
}

/** The attribute values a page's hidden inputs, metas, links and forms carry, in page order. */
export function htmlValues(text: string): HtmlValue[] {
  const out: HtmlValue[] = [];
  // The same name twice (two forms with a token each): the second is `name#1`.
  const placeOf = numberedPlaces();
  let links = 0;
  let forms = 0;
  for (const { tag, source } of tags(text.length > MAX_HTML ? text.slice(0, MAX_HTML) : text)) {
    if (out.length >= MAX_VALUES) break;
    const attrs = attributes(source);
    if (tag === 'a') {
      const i = links++;
      const href = attrs.get('href');
      if (href !== undefined) out.push({ place: `a#${i}@href`, value: href });
    } else if (tag === 'form') {
      const i = forms++;
      const action = attrs.get('action');
      if (action !== undefined) out.push({ place: `form#${i}@action`, value: action });
    } else if (tag === 'input') {
      const name = attrs.get('name');
      const value = attrs.get('value');
      if ((attrs.get('type') ?? '').toLowerCase() === 'hidden' && name !== undefined && value !== undefined) out.push({ place: placeOf(`input[${name}]`), value });
    } else {
      const name = attrs.get('name') ?? attrs.get('property');
      const content = attrs.get('content');
      if (name !== undefined && content !== undefined) out.push({ place: placeOf(`meta[${name}]`), value: content });
    }
  }
  return out;
}

/**
 * The page's input, meta, a and form start tags, each with its attributes' source, in one pass: a tag ends at
 * the first `>` outside quotes, and a quote never closed takes the rest of the page into its tag (as HTML's
 * tokenizer does), which ends the scan; so the scan is linear whatever the page.
 */
function* tags(text: string): Generator<{ tag: string; source: string }> {
  let at = 0;
  for (;;) {
    const open = text.indexOf('<', at);
    if (open < 0) return;
    const name = TAG_NAME.exec(text.slice(open + 1, open + 7));
    if (!name) {
      at = open + 1;
      continue;
    }
    const start = open + 1 + name[1]!.length;
    let end = start;
    while (end < text.length && text[end] !== '>') {
      const c = text[end]!;
      if (c === '"' || c === "'") {
        const close = text.indexOf(c, end + 1);
        if (close < 0) return;
        end = close + 1;
      } else end++;
    }
    if (end >= text.length) return;
    yield { tag: name[1]!.toLowerCase(), source: text.slice(start, end) };
    at = end + 1;
  }
}

/** Names a place by its base, the second of a base `base#1`, the third `base#2`. */
export function numberedPlaces(): (base: string) => string {
  const seen = new Map<string, number>();
  return (base) => {
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}#${n}`;
  };
}

/** A tag's attributes, names lower-cased, values with their character references decoded (the first of a name wins, as in HTML). */
function attributes(source: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of source.matchAll(ATTRIBUTE)) {
    const name = a[1]!.toLowerCase();
    if (!out.has(name)) out.set(name, decodeReferences(a[2] ?? a[3] ?? a[4] ?? ''));
  }
  return out;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** `&amp;`, `&#39;`, `&#x2F;` and the other few references attribute values use, decoded; others left as written. */
export function decodeReferences(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z]{2,6});/g, (ref, body: string) => {
    if (body[0] !== '#') return NAMED[body] ?? ref;
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : ref;
  });
}
