// HpackDecoder (proxy/h2/hpack.ts) on the RFC 7541 Appendix C examples as
// literal hex, and on the blocks it must refuse. (Checked once by hand, not
// here: all 446 stories, 47142 blocks, of github.com/http2jp/hpack-test-case
// at 8a1406e decode to their expected header lists.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HpackDecoder, type DecodedHeaders, type HpackError } from '../../../proxy/h2/hpack.js';
import { huffmanDecode } from '../../../proxy/h2/huffman.js';
import { examples, hex } from '../../helpers/hpack-examples.js';

const decoded = (result: DecodedHeaders | HpackError): DecodedHeaders => {
  if ('code' in result) assert.fail(result.message);
  return result;
};
const refused = (result: DecodedHeaders | HpackError): string => {
  assert.ok('code' in result, `refused, got ${JSON.stringify(result)}`);
  assert.equal(result.code, 'COMPRESSION_ERROR');
  return result.message;
};

describe('HpackDecoder', () => {
  it('decodes the C.2 field representations, keeping the never-indexed flag', () => {
    const cases: Array<{ block: string; headers: Array<[string, string]>; never: number[]; size: number }> = [
      { block: '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572', headers: [['custom-key', 'custom-header']], never: [], size: 55 },
      { block: '040c 2f73 616d 706c 652f 7061 7468', headers: [[':path', '/sample/path']], never: [], size: 0 },
      { block: '1008 7061 7373 776f 7264 0673 6563 7265 74', headers: [['password', 'secret']], never: [0], size: 0 },
      { block: '82', headers: [[':method', 'GET']], never: [], size: 0 },
    ];
    for (const c of cases) {
      const decoder = new HpackDecoder();
      const result = decoded(decoder.decode(hex(c.block)));
      assert.deepEqual(result.headers, c.headers);
      assert.deepEqual(result.neverIndexed, c.never);
      assert.equal(decoder.tableOctets, c.size);
    }
  });

  for (const example of examples) {
    it(`decodes the ${example.name}, in sequence on one table`, () => {
      const decoder = new HpackDecoder({ maxTableSize: example.tableSize });
      for (const step of example.steps) {
        const result = decoded(decoder.decode(hex(step.block)));
        assert.deepEqual(result.headers, step.headers);
        assert.deepEqual(decoder.dynamicTable(), step.table);
        assert.equal(decoder.tableOctets, step.size);
        assert.equal(result.listSize, step.headers.reduce((n, [k, v]) => n + k.length + v.length + 32, 0));
      }
    });
  }

  it('refuses each Appendix C block cut short at every byte, and a refused decoder stays refused', () => {
    for (const example of examples) {
      const block = hex(example.steps[0]!.block);
      let refusedCuts = 0;
      for (let cut = 1; cut < block.length; cut++) {
        const decoder = new HpackDecoder({ maxTableSize: example.tableSize });
        const result = decoder.decode(block.subarray(0, cut));
        // A cut can fall between two whole fields: that prefix is a valid block.
        if ('code' in result) {
          refusedCuts++;
          assert.equal(refused(decoder.decode(hex('82'))), result.message);
        }
      }
      assert.ok(refusedCuts >= block.length - 6, `${example.name}: ${refusedCuts} of ${block.length - 1} cuts refused`);
    }
  });

  it('applies size updates at the start of a block and evicts (section 4.2, 6.3)', () => {
    const decoder = new HpackDecoder();
    decoded(decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572')));
    assert.equal(decoder.tableOctets, 55);
    // Two updates (to 0, then 4096) then an indexed field: the table is empty and regrows.
    const result = decoded(decoder.decode(hex('20 3fe1 1f 82')));
    assert.deepEqual(result.headers, [[':method', 'GET']]);
    assert.equal(decoder.tableOctets, 0);
    assert.equal(decoder.maxTableSize, 4096);
    refused(new HpackDecoder().decode(hex('be')));
  });

  it('shrinks the table when the acknowledged SETTINGS_HEADER_TABLE_SIZE drops below it', () => {
    const decoder = new HpackDecoder();
    decoded(decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572')));
    decoder.setTableSizeLimit(40);
    assert.equal(decoder.tableOctets, 0);
    assert.equal(decoder.maxTableSize, 40);
    refused(decoder.decode(hex('3f0a')));
  });

  const refusals: Array<{ name: string; block: string; opts?: ConstructorParameters<typeof HpackDecoder>[0]; says: RegExp }> = [
    { name: 'a size update above SETTINGS_HEADER_TABLE_SIZE', block: '3fe2 1f', says: /4097 exceeds SETTINGS_HEADER_TABLE_SIZE 4096/ },
    { name: 'a size update above a lowered limit', block: '3f e2 01', opts: { maxTableSize: 256 }, says: /exceeds SETTINGS_HEADER_TABLE_SIZE 256/ },
    { name: 'a size update after a field', block: '82 20', says: /after a header field/ },
    { name: 'index 0', block: '80', says: /index 0/ },
    { name: 'an index past both tables', block: 'ff 00', says: /index 127/ },
    { name: 'a literal naming an index past both tables', block: '7f 00 01 61', says: /index 63/ },
    { name: 'a string longer than the block', block: '04 05 2f', says: /past the end/ },
    { name: 'an integer that never ends', block: 'ff ff ff', says: /truncated or too large/ },
    { name: 'an integer over 2^32', block: 'ff ff ff ff ff ff 0f', says: /truncated or too large/ },
    { name: 'a Huffman string padded with a zero bit', block: '04 81 00', says: /not EOS's prefix/ },
    { name: 'a Huffman string padded with 8 bits', block: '04 82 1f ff', says: /more than 7 bits/ },
    { name: 'a Huffman string holding EOS', block: '04 84 ff ff ff ff', says: /EOS symbol/ },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name} with COMPRESSION_ERROR`, () => {
      assert.match(refused(new HpackDecoder(r.opts).decode(hex(r.block))), r.says);
    });
  }

  it('refuses an HPACK bomb with ENHANCE_YOUR_CALM as soon as the list passes the cap, from a block of a few KiB', () => {
    // One 4000-octet value put into the table, then referenced 4000 times:
    // a 4 KiB block that would decode to 16 MB.
    const value = 'v'.repeat(4000);
    const insert = Buffer.concat([hex('40 01 78 7f a1 1e'), Buffer.from(value)]); // name "x", value length 4000
    const block = Buffer.concat([insert, Buffer.alloc(4000, 0xbe)]);
    const decoder = new HpackDecoder({ maxHeaderListSize: 64 * 1024 });
    const result = decoder.decode(block);
    assert.ok('code' in result);
    assert.equal(result.code, 'ENHANCE_YOUR_CALM');
    assert.match(result.message, /more than 65536 octets/);
    const uncapped = decoded(new HpackDecoder().decode(block));
    assert.equal(uncapped.headers.length, 4001);
  });

  it('decodes Huffman codes of 5 to 30 bits (Appendix B)', () => {
    // Codes from Appendix B: '0' 00000, 'a' 00011, ' ' 010100, '&' 11111000,
    // 0x00 1111111111000, 0x01 11111111111111111011000, 0x0a 30 bits (1 x 28, 00),
    // 0xff 11111111111111111111101110; then ones as padding.
    const bits = ['00000', '00011', '010100', '11111000', '1111111111000', '11111111111111111011000', '1'.repeat(28) + '00', '11111111111111111111101110'].join('');
    const padded = bits + '1'.repeat((8 - (bits.length % 8)) % 8);
    const bytes = Buffer.from(padded.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
    assert.equal(huffmanDecode(bytes), '0a &\u0000\u0001\n\u00ff');
  });
});
