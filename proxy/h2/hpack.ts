// A passive HPACK decoder for one direction of a tapped h2 connection (RFC 7541).
//
// It decodes the header blocks one endpoint's encoder sends, in wire order,
// keeping the dynamic table in step with that encoder; it never encodes and
// never changes a byte. Header names and values are octets, kept as latin1
// strings (one char per octet), so what was sent survives exactly: pseudo-
// headers, order, duplicates and case as on the wire.
//
// Errors are returned as values with the RFC 9113 code the caller closes the
// connection with (GOAWAY): COMPRESSION_ERROR for a malformed block,
// ENHANCE_YOUR_CALM for a list over the cap (section 10.5: excessive, not
// malformed). After one the decoder refuses every later block, since its
// table no longer matches the encoder's.
import { huffmanDecode } from './huffman.js';

/** The static table, RFC 7541 Appendix A (index 1 is STATIC[0]). */
const STATIC: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];

/** SETTINGS_HEADER_TABLE_SIZE's initial value (RFC 9113 section 6.5.2). */
export const DEFAULT_HEADER_TABLE_SIZE = 4096;

/** One decoded header block. */
export interface DecodedHeaders {
  /** The header fields in wire order, as [name, value] octets in latin1 (pseudo-headers as sent). */
  headers: Array<[string, string]>;
  /** Positions in `headers` of fields sent as "never indexed" (section 6.2.3): redaction must honour them. */
  neverIndexed: number[];
  /** The header list size of RFC 9113 section 6.5.2: each field's name and value octets plus 32. */
  listSize: number;
}

/** A block the decoder refuses. */
export interface HpackError {
  /** The RFC 9113 error code name: malformed, or over the header list cap. */
  code: 'COMPRESSION_ERROR' | 'ENHANCE_YOUR_CALM';
  /** What was wrong, in a sentence. */
  message: string;
}

/** Limits one decoder follows. */
export interface HpackDecoderOptions {
  /** The largest dynamic table size update allowed (SETTINGS_HEADER_TABLE_SIZE of the decoding side); default 4096. */
  maxTableSize?: number;
  /** Refuse a block whose decoded header list size exceeds this (HPACK bomb guard); default no cap. */
  maxHeaderListSize?: number;
}

const fail = (message: string): HpackError => ({ code: 'COMPRESSION_ERROR', message });

// Integers beyond this cannot be an index, a length or a size a peer may use.
const MAX_INTEGER = 2 ** 32 - 1;

/** Decodes one direction's header blocks in order; decode() returns the fields or an HpackError. */
export class HpackDecoder {
  // Newest entry last; index 62 is the newest (section 2.3.3).
  private readonly entries: Array<[string, string]> = [];
  private size = 0;
  private tableSize = DEFAULT_HEADER_TABLE_SIZE;
  private sizeLimit: number;
  private maxListSize: number;
  private failed: HpackError | undefined;
  // The block being decoded and the read position in it.
  private block: Buffer = Buffer.alloc(0);
  private pos = 0;

  constructor(opts: HpackDecoderOptions = {}) {
    this.sizeLimit = DEFAULT_HEADER_TABLE_SIZE;
    this.maxListSize = opts.maxHeaderListSize ?? Infinity;
    this.setTableSizeLimit(opts.maxTableSize ?? DEFAULT_HEADER_TABLE_SIZE);
  }

  /** The dynamic table's current maximum size (changed only by the encoder's size updates, section 4.2). */
  get maxTableSize(): number {
    return this.tableSize;
  }

  /** The dynamic table's current size in RFC 7541 octets (section 4.1). */
  get tableOctets(): number {
    return this.size;
  }

  /** The dynamic table, newest first (index 62 first), for tests and inspection. */
  dynamicTable(): Array<[string, string]> {
    return this.entries.slice().reverse();
  }

  /**
   * Sets the largest size update the encoder may send: the decoding side's
   * SETTINGS_HEADER_TABLE_SIZE, once the encoder has acknowledged it. A
   * larger limit does not grow the table (only the encoder's size update
   * does, section 4.2); a smaller one than the table's size shrinks it now,
   * as the encoder must (its next block starts with an update at most this
   * large, which evicts at least as much: the tables end up the same).
   */
  setTableSizeLimit(limit: number): void {
    this.sizeLimit = limit;
    if (limit < this.tableSize) {
      this.tableSize = limit;
      this.evict(0);
    }
  }

  /** Sets the header list cap (the HPACK bomb guard) for the blocks decoded from now on. */
  setHeaderListCap(cap: number): void {
    this.maxListSize = cap;
  }

  /** Decodes one complete header block (a HEADERS or PUSH_PROMISE fragment with its CONTINUATIONs). */
  decode(block: Uint8Array): DecodedHeaders | HpackError {
    if (this.failed) return this.failed;
    const result = this.decodeBlock(block);
    if ('code' in result) this.failed = result;
    return result;
  }

  private decodeBlock(bytes: Uint8Array): DecodedHeaders | HpackError {
    const block = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    this.block = block;
    this.pos = 0;
    const headers: Array<[string, string]> = [];
    const neverIndexed: number[] = [];
    let listSize = 0;
    while (this.pos < block.length) {
      const first = block[this.pos]!;
      if ((first & 0xe0) === 0x20) {
        //
        // Dynamic table size update (section 6.3): only before the first field
        // (section 4.2), and never above the decoding side's SETTINGS limit.
        //
        if (headers.length > 0) return fail('a dynamic table size update comes after a header field (RFC 7541 section 4.2)');
        const size = this.integer(5);
        if (size < 0) return fail('a dynamic table size update is truncated or too large');
        if (size > this.sizeLimit) {
          return fail(`a dynamic table size update to ${size} exceeds SETTINGS_HEADER_TABLE_SIZE ${this.sizeLimit}`);
        }
        this.tableSize = size;
        this.evict(0);
        continue;
      }
      let name: string;
      let value: string;
      if (first & 0x80) {
        // Indexed header field (section 6.1).
        const index = this.integer(7);
        if (index < 0) return fail('a header field index is truncated or too large');
        const entry = index > 0 ? this.lookup(index) : undefined;
        if (!entry) return fail(`a header field refers to index ${index}, which is in neither table`);
        [name, value] = entry;
      } else {
        // Literal header field: with incremental indexing (6 bits), without (4), never indexed (4) (section 6.2).
        const indexing = (first & 0xc0) === 0x40;
        const never = (first & 0xf0) === 0x10;
        const index = this.integer(indexing ? 6 : 4);
        if (index < 0) return fail('a header field index is truncated or too large');
        if (index > 0) {
          const entry = this.lookup(index);
          if (!entry) return fail(`a header field names index ${index}, which is in neither table`);
          name = entry[0];
        } else {
          const literal = this.string();
          if (typeof literal !== 'string') return literal;
          name = literal;
        }
        const literal = this.string();
        if (typeof literal !== 'string') return literal;
        value = literal;
        if (never) neverIndexed.push(headers.length);
        if (indexing) this.insert(name, value);
      }
      headers.push([name, value]);
      listSize += name.length + value.length + 32;
      //
      // The bomb guard: a few bytes of indexed references can expand to
      // megabytes; stop as soon as the list passes the cap, not after.
      //
      if (listSize > this.maxListSize) {
        return { code: 'ENHANCE_YOUR_CALM', message: `a header list decodes to more than ${this.maxListSize} octets (the SETTINGS_MAX_HEADER_LIST_SIZE cap, RFC 9113 section 10.5.1)` };
      }
    }
    return { headers, neverIndexed, listSize };
  }

  // Reads an integer with an n-bit prefix at pos (section 5.1); -1 when truncated or too large.
  private integer(prefixBits: number): number {
    const block = this.block;
    const max = (1 << prefixBits) - 1;
    let value = block[this.pos++]! & max;
    if (value < max) return value;
    let multiplier = 1;
    for (;;) {
      if (this.pos >= block.length) return -1;
      const byte = block[this.pos++]!;
      value += (byte & 0x7f) * multiplier;
      if (value > MAX_INTEGER) return -1;
      if ((byte & 0x80) === 0) return value;
      multiplier *= 128;
    }
  }

  // Reads a string literal at pos (section 5.2).
  private string(): string | HpackError {
    const block = this.block;
    if (this.pos >= block.length) return fail('a header block ends where a string literal should start');
    const huffman = (block[this.pos]! & 0x80) !== 0;
    const length = this.integer(7);
    if (length < 0 || this.pos + length > block.length) return fail('a string literal runs past the end of its header block');
    const start = this.pos;
    this.pos += length;
    if (!huffman) return block.toString('latin1', start, this.pos);
    const decoded = huffmanDecode(block, start, this.pos);
    return typeof decoded === 'string' ? decoded : fail(decoded.error);
  }

  private lookup(index: number): readonly [string, string] | undefined {
    if (index <= STATIC.length) return STATIC[index - 1];
    return this.entries[this.entries.length - 1 - (index - STATIC.length - 1)];
  }

  // Adds an entry, evicting the oldest to make room (section 4.4); an entry
  // larger than the whole table empties it and is not added.
  private insert(name: string, value: string): void {
    const entrySize = name.length + value.length + 32;
    this.evict(entrySize);
    if (entrySize <= this.tableSize) {
      this.entries.push([name, value]);
      this.size += entrySize;
    }
  }

  // Evicts oldest entries until `room` more octets fit within the table size (section 4.3).
  private evict(room: number): void {
    let drop = 0;
    while (this.size + room > this.tableSize && drop < this.entries.length) {
      const [n, v] = this.entries[drop++]!;
      this.size -= n.length + v.length + 32;
    }
    if (drop > 0) this.entries.splice(0, drop);
  }
}
