// Zip bodies (docs/diff.md "Zip bodies"): a body that is a zip, by media type
// or by its magic bytes, is read in memory with yauzl into `{ entries: { name:
// value } }`. Text parts (.json/.jsonl/.md/.txt/.log) are parsed like bodies
// (the rules normalize them afterwards, with the rest of the body); binary
// parts compare by name and size; mtimes are ignored.
//
// yauzl is asynchronous and body parsers are not, so reading happens in a
// step before normalize (the in-memory store's open, or `ZipBodies#prepareEntry` for
// callers that read entries one at a time): each zip body is decoded once
// and kept by digest, and the synchronous "zip" parser looks it up.
//
// A zip is hostile input: total inflated bytes and the entry count are
// capped, declared sizes are checked before inflating and actual sizes while
// inflating (yauzl's validateEntrySizes), and whatever goes wrong becomes
// `{ zipError: "..." }` — a value that shows as a difference, never a crash.
import { createHash } from 'node:crypto';
import type yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import type { HarEntry } from '../../capture/index.js';
import { parseBody, rawBody, type BodyParser, type RawBody } from './bodies.js';
import { isZipMedia, lazyModule, mediaType } from '../../core/index.js';

// yauzl, loaded on the first zip body: most captures hold none.
const yauzlLib = lazyModule<typeof yauzl>('yauzl', import.meta.url);

/** Caps on what one zip body may expand to. */
export interface ZipLimits {
  /** Total inflated bytes of all entries (default 64 MiB). */
  maxTotalBytes: number;
  /** Number of entries (default 10,000). */
  maxEntries: number;
}

/** The default caps. */
export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({ maxTotalBytes: 64 * 1024 * 1024, maxEntries: 10_000 });

/** A zip body as compared: entries by name, or why it could not be read. */
export type ZipValue = { entries: Record<string, unknown> } | { zipError: string };

const MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

const TEXT_PARTS: Record<string, string> = {
  json: 'application/json',
  jsonl: 'application/jsonl',
  ndjson: 'application/jsonl',
  md: 'text/markdown',
  txt: 'text/plain',
  log: 'text/plain',
};

/** True when a body is a zip: by media type, or by the local-file-header magic PK\x03\x04. */
export function isZipBody(media: string, bytes: Buffer | undefined): boolean {
  if (isZipMedia(media)) return true;
  return !!bytes && bytes.length >= 4 && bytes.subarray(0, 4).equals(MAGIC);
}

// CP437's upper half (0x80-0xFF), for names the zip does not flag as UTF-8
// and that are not valid UTF-8 either (old DOS / Windows zippers).
const CP437_HIGH =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0';

/** A zip entry name: UTF-8 when it decodes as such, else CP437. */
export function decodeZipName(raw: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    let s = '';
    for (const b of raw) s += b < 0x80 ? String.fromCharCode(b) : CP437_HIGH[b - 0x80];
    return s;
  }
}

function unsafeName(name: string): string | undefined {
  if (name.includes('\\')) return 'contains a backslash';
  if (/^[a-zA-Z]:/.test(name) || name.startsWith('/')) return 'is an absolute path';
  if (name.split('/').includes('..')) return 'climbs out with ..';
  return undefined;
}

function textPart(name: string, data: Buffer, parseText: (b: RawBody) => unknown): unknown {
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  const media = TEXT_PARTS[ext];
  if (media) {
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(data);
      return parseText({ media, text });
    } catch {
      // Not UTF-8 after all: compare it as binary.
    }
  }
  return `<binary ${data.length} bytes>`;
}

/** Reads a zip held in memory into `{ entries }`, or `{ zipError }`; never throws. */
export async function readZip(bytes: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS, parseText: (b: RawBody) => unknown = defaultParseText): Promise<ZipValue> {
  let zip: ZipFile;
  try {
    zip = await new Promise<ZipFile>((resolve, reject) =>
      yauzlLib().fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, decodeStrings: false }, (err, z) => (err ? reject(err) : resolve(z))),
    );
  } catch (err) {
    return { zipError: `not a readable zip: ${(err as Error).message}` };
  }
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    return { zipError: `zip holds ${zip.entryCount} entries, past the cap of ${limits.maxEntries}` };
  }
  const entries: Record<string, unknown> = {};
  let total = 0;
  return new Promise<ZipValue>((resolve) => {
    let done = false;
    const finish = (v: ZipValue) => {
      if (done) return;
      done = true;
      zip.close();
      resolve(v);
    };
    zip.on('error', (err: Error) => finish({ zipError: `corrupt zip: ${err.message}` }));
    zip.on('end', () => finish({ entries }));
    zip.on('entry', (entry: Entry) => {
      const name = decodeZipName(entry.fileName as unknown as Buffer);
      const bad = unsafeName(name);
      if (bad) return finish({ zipError: `zip entry name ${JSON.stringify(name)} ${bad}` });
      if (name.endsWith('/')) return zip.readEntry(); // a folder: its files carry the names
      if (entry.isEncrypted()) {
        entries[name] = `<encrypted ${entry.uncompressedSize} bytes>`;
        return zip.readEntry();
      }
      // Declared sizes first: a bomb that tells the truth stops here, before inflating.
      if (total + entry.uncompressedSize > limits.maxTotalBytes) {
        return finish({ zipError: `zip inflates past the cap of ${limits.maxTotalBytes} bytes (at entry ${JSON.stringify(name)})` });
      }
      zip.openReadStream(entry, (err, stream) => {
        if (err) return finish({ zipError: `corrupt zip entry ${JSON.stringify(name)}: ${err.message}` });
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (c: Buffer) => {
          size += c.length;
          // yauzl also errors past the declared size; this is the belt to its braces.
          if (total + size > limits.maxTotalBytes) {
            stream.destroy();
            finish({ zipError: `zip inflates past the cap of ${limits.maxTotalBytes} bytes (at entry ${JSON.stringify(name)})` });
            return;
          }
          chunks.push(c);
        });
        stream.on('error', (e: Error) => finish({ zipError: `corrupt zip entry ${JSON.stringify(name)}: ${e.message}` }));
        stream.on('end', () => {
          if (done) return;
          total += size;
          entries[name] = textPart(name, Buffer.concat(chunks, size), parseText);
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
}

function defaultParseText(b: RawBody): unknown {
  const p = parseBody(b);
  return p.kind === 'events' ? p.events : p.value;
}

function digest(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The bytes of a parsed-for-normalize body when it is a zip (checked on a prefix first: most bodies are not). */
function zipBytes(b: RawBody): Buffer | undefined {
  if (b.bytes) return isZipBody(b.media, b.bytes) ? b.bytes : undefined;
  if (b.text === undefined || !(isZipMedia(b.media) || b.text.startsWith('PK\x03\x04'))) return undefined;
  return Buffer.from(b.text, 'utf8');
}

/** The bytes of a HAR body when it is a zip, else undefined. */
export function zipBytesOf(mime: string | undefined, text: string | undefined, encoding: string | undefined): Buffer | undefined {
  if (text === undefined || text === '') return undefined;
  const media = mediaType(mime);
  if (encoding === 'base64') {
    if (!isZipMedia(media) && !isZipBody(media, Buffer.from(text.slice(0, 8), 'base64'))) return undefined;
  } else if (!isZipMedia(media) && !text.startsWith('PK\x03\x04')) return undefined;
  const raw = rawBody(mime, text, encoding);
  return raw ? zipBytes(raw) ?? (isZipMedia(media) ? raw.bytes ?? Buffer.from(raw.text ?? '', 'utf8') : undefined) : undefined;
}

/** Zip bodies decoded ahead of normalize, by digest, and the "zip" body parser that reads them. */
export class ZipBodies {
  private readonly decoded = new Map<string, ZipValue>();

  constructor(private readonly limits: ZipLimits = DEFAULT_ZIP_LIMITS) {}

  /** Decodes one body's zip (if it is one) into the table. */
  async prepareBody(bytes: Buffer | undefined, parsers?: readonly BodyParser[]): Promise<void> {
    if (!bytes) return;
    const key = digest(bytes);
    if (this.decoded.has(key)) return;
    const parseText = (b: RawBody): unknown => {
      const p = parseBody(b, parsers?.filter((x) => x.name !== 'zip'));
      return p.kind === 'events' ? p.events : p.value;
    };
    this.decoded.set(key, await readZip(bytes, this.limits, parseText));
  }

  /** Decodes the zip bodies of one HAR entry (request and response). */
  async prepareEntry(e: HarEntry, parsers?: readonly BodyParser[]): Promise<void> {
    const post = e.request.postData;
    if (post) await this.prepareBody(zipBytesOf(post.mimeType, post.text, post._encoding), parsers);
    const c = e.response.content;
    await this.prepareBody(zipBytesOf(c.mimeType, c.text, c.encoding), parsers);
  }

  /** Decodes every zip body of a list of entries. */
  async prepareEntries(entries: Iterable<HarEntry>, parsers?: readonly BodyParser[]): Promise<void> {
    for (const e of entries) await this.prepareEntry(e, parsers);
  }

  /** The decoded value of a zip body, or undefined when it was not prepared. */
  lookup(bytes: Buffer): ZipValue | undefined {
    return this.decoded.get(digest(bytes));
  }

  /** Forgets decoded bodies (callers that stream entries clear it as they go). */
  clear(): void {
    this.decoded.clear();
  }

  /** The "zip" body parser over this table. */
  readonly parser: BodyParser = {
    name: 'zip',
    parse: (b) => {
      const bytes = zipBytes(b);
      if (!bytes) return undefined;
      return { kind: 'json', value: this.lookup(bytes) ?? { zipError: 'zip body was not decoded before normalize (no unzip stage)' } };
    },
  };

  /** A parser list with "zip" placed before "jsonl" (first that accepts wins), replacing any "zip" already there. */
  withParser(list: readonly BodyParser[]): BodyParser[] {
    const out = list.filter((p) => p.name !== 'zip');
    const at = out.findIndex((p) => p.name === 'jsonl');
    out.splice(at < 0 ? out.length - 1 : at, 0, this.parser);
    return out;
  }
}
