// The RFC 7541 Appendix C.3–C.6 examples: header blocks as literal hex, with
// the header list and the dynamic table (newest first) after each block.

/** One block of an example sequence and what decoding it leaves. */
export interface Step {
  /** The block in the RFC's hex dump form. */
  block: string;
  /** The header list it decodes to. */
  headers: Array<[string, string]>;
  /** The dynamic table after it, newest first. */
  table: Array<[string, string]>;
  /** The table's size after it (RFC 7541 section 4.1). */
  size: number;
}

// C.3 and C.4 encode the same three requests.
const requests = (blocks: [string, string, string]): Step[] => [
  {
    block: blocks[0],
    headers: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']],
    table: [[':authority', 'www.example.com']],
    size: 57,
  },
  {
    block: blocks[1],
    headers: [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com'], ['cache-control', 'no-cache']],
    table: [['cache-control', 'no-cache'], [':authority', 'www.example.com']],
    size: 110,
  },
  {
    block: blocks[2],
    headers: [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']],
    table: [['custom-key', 'custom-value'], ['cache-control', 'no-cache'], [':authority', 'www.example.com']],
    size: 164,
  },
];

// C.5 and C.6 encode the same three responses.
const date21 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const date22 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const cookie = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const responses = (blocks: [string, string, string]): Step[] => [
  {
    block: blocks[0],
    headers: [[':status', '302'], ['cache-control', 'private'], ['date', date21], ['location', 'https://www.example.com']],
    table: [['location', 'https://www.example.com'], ['date', date21], ['cache-control', 'private'], [':status', '302']],
    size: 222,
  },
  {
    block: blocks[1],
    headers: [[':status', '307'], ['cache-control', 'private'], ['date', date21], ['location', 'https://www.example.com']],
    table: [[':status', '307'], ['location', 'https://www.example.com'], ['date', date21], ['cache-control', 'private']],
    size: 222,
  },
  {
    block: blocks[2],
    headers: [
      [':status', '200'], ['cache-control', 'private'], ['date', date22], ['location', 'https://www.example.com'],
      ['content-encoding', 'gzip'], ['set-cookie', cookie],
    ],
    table: [['set-cookie', cookie], ['content-encoding', 'gzip'], ['date', date22]],
    size: 215,
  },
];

/** C.3–C.6, each a sequence of blocks on one connection. */
export const examples: Array<{ name: string; tableSize?: number; steps: Step[] }> = [
  {
    name: 'C.3 requests without Huffman',
    steps: requests([
      '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '8286 84be 5808 6e6f 2d63 6163 6865',
      '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    ]),
  },
  {
    name: 'C.4 requests with Huffman',
    steps: requests([
      '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
      '8286 84be 5886 a8eb 1064 9cbf',
      '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
    ]),
  },
  {
    name: 'C.5 responses without Huffman, evicting at table size 256',
    tableSize: 256,
    steps: responses([
      '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133' +
        '2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '4803 3330 37c1 c0bf',
      '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d' +
        '54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049' +
        '5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31',
    ]),
  },
  {
    name: 'C.6 responses with Huffman, evicting at table size 256',
    tableSize: 256,
    steps: responses([
      '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6' +
        '2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
      '4883 640e ffc1 c0bf',
      '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab' +
        '77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f' +
        '9587 3160 65c0 03ed 4ee5 b106 3d50 07',
    ]),
  },
];

/** Bytes from the RFC's hex dump form (spaces allowed). */
export const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
