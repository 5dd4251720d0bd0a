// HPACK's Huffman code for string literals (RFC 7541 section 5.2, Appendix B).
//
// The code in Appendix B is canonical: codes of one length are consecutive
// and ordered by symbol, and each length's first code follows the last code
// of the shorter lengths. So the code lengths alone define it; the table
// below is the "len" column of Appendix B, for symbols 0..255 and EOS (256).
// Decoding walks the bits, comparing the code read so far against the first
// code of its length (one add and compare per bit, no tree). The code is
// complete (every 30-bit pattern starts with some code), so no bit sequence
// runs past 30 bits without a symbol.

/** Bit length of each symbol's code, symbol 0..256 (256 is EOS), RFC 7541 Appendix B. */
const CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

const EOS = 256;
const MAX_LENGTH = 30;

// Canonical code tables: for each length, the first code, how many codes,
// and where its symbols start in SYMBOLS (symbols ordered by length, then value).
const firstCode = new Array<number>(MAX_LENGTH + 1).fill(0);
const countOf = new Array<number>(MAX_LENGTH + 1).fill(0);
const startOf = new Array<number>(MAX_LENGTH + 1).fill(0);
const SYMBOLS: number[] = CODE_LENGTHS.map((_, symbol) => symbol).sort((a, b) => CODE_LENGTHS[a]! - CODE_LENGTHS[b]! || a - b);
for (const length of CODE_LENGTHS) countOf[length]!++;
{
  let code = 0;
  let start = 0;
  for (let length = 1; length <= MAX_LENGTH; length++) {
    firstCode[length] = code;
    startOf[length] = start;
    code = (code + countOf[length]!) * 2;
    start += countOf[length]!;
  }
}

/** Decodes a Huffman-coded string literal into its octets (as latin1), or returns a sentence saying why it is malformed. */
export function huffmanDecode(bytes: Uint8Array): { value: string } | { error: string } {
  // Every code is at least 5 bits long, so n bytes hold at most 8n/5 symbols.
  const out = Buffer.allocUnsafe(Math.ceil((bytes.length * 8) / 5));
  let written = 0;
  let code = 0;
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1);
      length++;
      const index = code - firstCode[length]!;
      if (index < countOf[length]!) {
        const symbol = SYMBOLS[startOf[length]! + index]!;
        //
        // Section 5.2: a string literal that contains the EOS symbol is a decoding error.
        //
        if (symbol === EOS) return { error: 'a Huffman string contains the EOS symbol' };
        out[written++] = symbol;
        code = 0;
        length = 0;
      }
    }
  }
  //
  // Section 5.2: padding is the most significant bits of EOS (all ones) and
  // strictly shorter than 8 bits; anything else is a decoding error.
  //
  if (length > 7) return { error: 'a Huffman string ends with more than 7 bits of padding' };
  if (code !== 2 ** length - 1) return { error: 'a Huffman string ends with padding that is not EOS\'s prefix' };
  return { value: out.toString('latin1', 0, written) };
}
