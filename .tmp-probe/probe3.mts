import { diffHars } from '../diff/index.js';
import { capture } from '../test/helpers/har.js';
type M = { type: 'send' | 'receive'; data: unknown; opcode?: number };
const base: M[] = [{ type: 'send', data: { op: 'sub', ch: 'a' } }, { type: 'receive', data: { op: 'ok' } }, { type: 'receive', data: { op: 'ev', n: 1 } }, { type: 'receive', data: { op: 'ev', n: 2 } }];
const cases: Array<[string, M[], any, any]> = [
  ['message dropped at end', base.slice(0, 3), undefined, undefined],
  ['message duplicated', [...base, base[3]!], undefined, undefined],
  ['text became binary', [base[0]!, base[1]!, base[2]!, { type: 'receive', data: Buffer.from(JSON.stringify({ op: 'ev', n: 2 })).toString('base64'), opcode: 2 }], undefined, undefined],
  ['close code', base, { code: 1011, reason: 'bye', by: 'server' }, undefined],
  ['close by other side', base, { code: 1000, reason: 'bye', by: 'server' }, undefined],
  ['close reason', base, { code: 1000, reason: 'other', by: 'client' }, undefined],
  ['field type string', [base[0]!, base[1]!, base[2]!, { type: 'receive', data: { op: 'ev', n: '2' } }], undefined, undefined],
  ['extra field', [base[0]!, base[1]!, base[2]!, { type: 'receive', data: { op: 'ev', n: 2, debug: true } }], undefined, undefined],
  ['plain text msg', [base[0]!, base[1]!, base[2]!, { type: 'receive', data: 'hello world' }], undefined, undefined],
];
const closeA = { code: 1000, reason: 'bye', by: 'client' as const };
for (const [name, msgs, close] of cases) {
  const old = capture([{ url: 'http://127.0.0.1:1/ws', ws: base, close: closeA }]);
  const neu = capture([{ url: 'http://127.0.0.1:1/ws', ws: msgs, close: close ?? closeA }]);
  const r = await diffHars({ name: 'old.har', har: old }, { name: 'new.har', har: neu });
  const real = r.differences.filter((d: any) => d.class === 'real').map((d: any) => `${d.kind}:${d.path}`);
  console.log(`${r.exitCode === 0 ? 'HIDDEN' : 'found '}  ${name}: ${real.join(', ') || r.differences.map((d: any) => d.class + ':' + d.path).join(', ')}`);
}
// SSE
const sse = (text: string) => capture([{ url: 'http://127.0.0.1:1/events', body: text, mime: 'text/event-stream' }]);
const sseBase = 'event: tick\nid: 1\ndata: {"n":1}\n\nevent: tick\nid: 2\ndata: {"n":2}\n\n';
const sseCases: Array<[string, string]> = [
  ['sse event name', 'event: tock\nid: 1\ndata: {"n":1}\n\nevent: tick\nid: 2\ndata: {"n":2}\n\n'],
  ['sse id', 'event: tick\nid: 7\ndata: {"n":1}\n\nevent: tick\nid: 2\ndata: {"n":2}\n\n'],
  ['sse retry added', 'retry: 100\n\nevent: tick\nid: 1\ndata: {"n":1}\n\nevent: tick\nid: 2\ndata: {"n":2}\n\n'],
  ['sse data', 'event: tick\nid: 1\ndata: {"n":1}\n\nevent: tick\nid: 2\ndata: {"n":3}\n\n'],
  ['sse comment', ': keepalive\n\nevent: tick\nid: 1\ndata: {"n":1}\n\nevent: tick\nid: 2\ndata: {"n":2}\n\n'],
];
for (const [name, text] of sseCases) {
  const r = await diffHars({ name: 'old.har', har: sse(sseBase) }, { name: 'new.har', har: sse(text) });
  const real = r.differences.filter((d: any) => d.class === 'real').map((d: any) => `${d.kind}:${d.path}`);
  console.log(`${r.exitCode === 0 ? 'HIDDEN' : 'found '}  ${name}: ${real.join(', ') || r.differences.map((d: any) => d.class + ':' + d.path).join(', ')}`);
}
