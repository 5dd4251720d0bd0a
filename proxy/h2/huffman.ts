// HPACK's Huffman code for string literals (RFC 7541 section 5.2, Appendix B).
//
// The code in Appendix B is canonical: codes of one length are consecutive
// and ordered by symbol, and each length's first code follows the last code
// of the shorter lengths. So the code lengths alone define it; the table
// below is the "len" column of Appendix B, for symbols 0..255 and EOS (256).
//
// Decoding reads 4 bits at a time through a state table built once at load:
// the states are the 256 inner nodes of the code tree (257 leaves), and each
// (state, nibble) entry says which node the 4 bits lead to and which symbol,
// if any, they complete. Every code is at least 5 bits long, so one nibble
// completes at most one symbol. Two lookups per input byte.

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

// Entry layout: bits 0-7 the next state, 8-16 the symbol, bit 17 "emits a
// symbol", bit 18 "reaches EOS" (an error, section 5.2).
const EMITS = 1 << 17;
const HITS_EOS = 1 << 18;

// The code tree: child[2 * node + bit] is an inner node (>= 0) or a leaf
// (-1 - symbol). depth and ones say how many bits lead to a node and
// whether they are all ones (a valid padding when at most 7).
const child: number[] = [-1, -1];
const depth: number[] = [0];
const ones: boolean[] = [true];
{
  const symbols = CODE_LENGTHS.map((_, symbol) => symbol).sort((a, b) => CODE_LENGTHS[a]! - CODE_LENGTHS[b]! || a - b);
  let code = 0;
  let length = CODE_LENGTHS[symbols[0]!]!;
  for (const symbol of symbols) {
    code *= 2 ** (CODE_LENGTHS[symbol]! - length);
    length = CODE_LENGTHS[symbol]!;
    let node = 0;
    for (let bit = length - 1; bit > 0; bit--) {
      const b = Math.floor(code / 2 ** bit) % 2;
      if (child[2 * node + b]! === -1) {
        const inner = depth.length;
        child.push(-1, -1);
        depth.push(depth[node]! + 1);
        ones.push(ones[node]! && b === 1);
        child[2 * node + b] = inner;
      }
      node = child[2 * node + b]!;
    }
    child[2 * node + (code % 2)] = -1 - symbol;
    code++;
  }
}
const TRANSITIONS = new Int32Array(depth.length * 16);
for (let state = 0; state < depth.length; state++) {
  for (let nibble = 0; nibble < 16; nibble++) {
    let node = state;
    let entry = 0;
    for (let bit = 3; bit >= 0; bit--) {
      const next = child[2 * node + ((nibble >> bit) & 1)]!;
      if (next >= 0) {
        node = next;
        continue;
      }
      const symbol = -1 - next;
      entry |= symbol === EOS ? HITS_EOS : EMITS | (symbol << 8);
      node = 0;
    }
    TRANSITIONS[state * 16 + nibble] = entry | node;
  }
}

// Decoded octets go here first; grown when a longer string comes.
let scratch = Buffer.allocUnsafe(4096);

/** Decodes the Huffman-coded string literal in bytes[start, end) into its octets (as latin1), or says why it is malformed. */
export function huffmanDecode(bytes: Uint8Array, start = 0, end = bytes.length): string | { error: string } {
  // Every code is at least 5 bits long, so n bytes hold at most 8n/5 symbols.
  const most = Math.ceil(((end - start) * 8) / 5);
  if (scratch.length < most) scratch = Buffer.allocUnsafe(most);
  const out = scratch;
  let written = 0;
  let state = 0;
  let flags = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    let entry = TRANSITIONS[state * 16 + (byte >> 4)]!;
    if (entry & EMITS) out[written++] = (entry >> 8) & 0x1ff;
    flags |= entry;
    entry = TRANSITIONS[(entry & 0xff) * 16 + (byte & 15)]!;
    if (entry & EMITS) out[written++] = (entry >> 8) & 0x1ff;
    flags |= entry;
    state = entry & 0xff;
  }
  //
  // Section 5.2: a string literal that contains the EOS symbol is a decoding
  // error, and padding is the most significant bits of EOS (all ones),
  // strictly shorter than 8 bits.
  //
  if (flags & HITS_EOS) return { error: 'a Huffman string contains the EOS symbol' };
  if (!ones[state]) return { error: "a Huffman string ends with padding that is not EOS's prefix" };
  if (depth[state]! > 7) return { error: 'a Huffman string ends with more than 7 bits of padding' };
  return out.toString('latin1', 0, written);
}
