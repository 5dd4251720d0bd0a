// Redaction alone, in its own process: what writing a HAR pays per body, and the hostile inputs that once made
// its searches quadratic (test/capture/redact.test.ts asserts what each gives; their speed is measured here).
//
//   node --import tsx bench/lib/area.ts redact
//
// Rows: µs of CPU per 2 KB JSON body of the diff bench's shape (ids, timestamps, URLs, no secret) through
// Redactor.textValue, per 2 KB protobuf-like message with one JWT through secretBytes; the same body with two
// secrets known by value as the HAR's writer knows them (by placeholder and length: redact-values.ts), and with
// one of them in it; ms per 1 MB hostile input.
import { Redactor } from '../capture/index.js';

/** Runs the redaction micro-benchmark. */
export function run(): void {
  const r = new Redactor(Buffer.alloc(32, 7));
  const bodies = Array.from({ length: 3000 }, (_, i) =>
    JSON.stringify({
      id: `5f0c2a9e-1b7d-4c3a-9e2f-${String(i).padStart(12, '0')}`,
      at: new Date(1.7e12 + i * 1000).toISOString(),
      owner: { name: 'ann', email: 'ann@example.com', url: `https://api.example.com/users/${i}` },
      items: Array.from({ length: 12 }, (_, k) => ({ qty: k, price: 9.99 * k, tags: ['red', 'blue'], href: `/items/${k}?page=${i}` })),
      note: 'plain text note with words',
    }),
  );
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLWJ5dGVz';
  const messages = bodies.map((b) => Buffer.concat([Buffer.from([0x0a, jwt.length]), Buffer.from(jwt, 'latin1'), Buffer.from(b.slice(0, 1900), 'latin1')]));
  const perItem = (label: string, items: unknown[], f: (x: never) => unknown) => {
    for (let round = 0; round < 3; round++) {
      const cpu = process.cpuUsage();
      for (let k = 0; k < 5; k++) for (const x of items) f(x as never);
      const used = process.cpuUsage(cpu);
      console.log(`${label}: ${((used.user + used.system) / (5 * items.length)).toFixed(2)} µs CPU each (round ${round + 1})`);
    }
  };
  perItem('textValue, 2 KB JSON body', bodies, (b: string) => r.textValue(b));
  perItem('secretBytes, 2 KB message with a JWT', messages, (m: Buffer) => r.secretBytes(m));
  // A reader knowing a session id (32 characters, as long as the bodies' ids are not) and a token (36, as long as their ids).
  const sid = 'Zk3v9QpL2mXw8RtY6nBc4HdJ0aFs7GeU';
  const reader = new Redactor(Buffer.alloc(32, 7));
  for (const v of [sid, 'at_9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c1']) reader.knowSecret({ p: reader.placeholderOf(v), n: v.length });
  perItem('textValue, 2 KB JSON body, 2 values known by placeholder', bodies, (b: string) => reader.textValue(b));
  const holding = bodies.map((b) => b.replace('plain text note', `plain ${sid} note`));
  perItem('textValue, 2 KB JSON body holding one of them', holding, (b: string) => reader.textValue(b));
  const N = 1_000_000;
  const hostile: Array<[string, () => unknown]> = [
    ['eyJ eyJ eyJ… as bytes', () => r.secretBytes(Buffer.from('eyJ'.repeat(N / 3), 'latin1'))],
    ['eyJ eyJ… then one dot, as bytes', () => r.secretBytes(Buffer.from(`${'eyJ'.repeat(N / 6)}.${'x'.repeat(N / 2)}`, 'latin1'))],
    ['eyJ eyJ eyJ… as text', () => r.textValue('eyJ'.repeat(N / 3))],
    ['BEGIN after BEGIN, no END', () => r.textValue(`${'-----BEGIN RSA PRIVATE KEY-----'.repeat(N / 31)} PRIVATE KEY-----`)],
    ['a scheme of a million letters', () => r.textValue(`${'a'.repeat(N)}://x:y@`)],
    ['2,000 letters before :// again and again, one @', () => r.textValue(`${`${'a'.repeat(2000)}://x`.repeat(N / 2004)}@`)],
    ['sk- sk- sk-…', () => r.textValue('sk-'.repeat(N / 3))],
    // Every word as long as a value known by placeholder, each another: each one hashed.
    ['words as long as a known value, 2 known', () => reader.textValue(Array.from({ length: N / 33 }, (_, i) => `${i.toString(36).padStart(31, 'x')}1`).join(' '))],
  ];
  for (const [label, f] of hostile) {
    const t = performance.now();
    f();
    console.log(`hostile 1 MB, ${label}: ${(performance.now() - t).toFixed(1)} ms`);
  }
}
