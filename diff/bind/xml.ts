// Values an XML answer hands its client (docs/diff.md "Issued values"): a
// SOAP or REST-XML service issues ids as an element's text
// (`<OrderId>ord_8f2k…</OrderId>`) or an attribute (`<Order id="…">`), and
// the client sends them back in its next request's XML body. The document as
// a whole is markup, which the prose test passes over (prose.ts), so its
// leaves are read here, each at a place named by its element's local name:
// `OrderId`, `Order@id` (the second of a name: `OrderId#1`). Found by one
// linear scan, not a parser: a document is hostile input.
import { decodeReferences, numberedPlaces } from './html.js';

/** One value an XML document carries, at its place, references decoded. */
export interface XmlValue {
  place: string;
  value: string;
}

/** Documents longer than this (characters) are read up to it. */
const MAX_XML = 1024 * 1024;
/** Values read from one document, at most. */
const MAX_VALUES = 2_000;

/** A start tag (its name and attributes' source), then the text up to the next tag. */
const ELEMENT = /<([A-Za-z_][\w.:-]*)((?:\s[^<>]*)?)>([^<]*)/g;
const ATTRIBUTE = /([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/g;

/** True for a body that is an XML document: an XML media type (`text/xml`, `application/soap+xml`), or no type and an XML declaration. */
export function isXml(text: string, contentType: string | undefined): boolean {
  if (contentType !== undefined) return /^\s*[\w.-]+\/([\w.-]+\+)?xml\s*(;|$)/i.test(contentType) && !/xhtml/i.test(contentType);
  return /^\s*<\?xml\s/.test(text);
}

/** The leaf elements' texts and the attribute values of an XML document (namespace declarations aside), in document order. */
export function xmlValues(text: string): XmlValue[] {
  const out: XmlValue[] = [];
  const placeOf = numberedPlaces();
  const doc = text.length > MAX_XML ? text.slice(0, MAX_XML) : text;
  for (const m of doc.matchAll(ELEMENT)) {
    if (out.length >= MAX_VALUES) break;
    const name = m[1]!.slice(m[1]!.indexOf(':') + 1);
    const attrs = m[2]!;
    for (const a of attrs.matchAll(ATTRIBUTE)) {
      if (a[1] === 'xmlns' || a[1]!.startsWith('xmlns:')) continue;
      out.push({ place: placeOf(`${name}@${a[1]!.slice(a[1]!.indexOf(':') + 1)}`), value: decodeReferences(a[2] ?? a[3] ?? '') });
    }
    // A leaf: its text is followed by its own end tag (text between two elements is whitespace or mixed content).
    const after = (m.index ?? 0) + m[0].length;
    const value = m[3]!.trim();
    if (value !== '' && !attrs.endsWith('/') && doc.startsWith(`</${m[1]}`, after)) out.push({ place: placeOf(name), value: decodeReferences(value) });
  }
  return out;
}
