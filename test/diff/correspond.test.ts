// Ordinal numbers across entries (docs/diff.md "Ids numbered along aligned
// places"): when the new build sends one more id-bearing field earlier in the
// capture — a header, a body field, a cookie, a WebSocket message, an SSE
// event, a gRPC message — holding an id both sides use later, the later
// entries must still compare equal: the only finding is the new field. And a
// real change must still read as one (a binding broken later). Every ordinal
// class is tried: uuid, ULID, session id, generated shapes (hex, nanoid,
// base62), issued values, numeric ids, a config ordinal pattern, redaction
// placeholders. Each case runs on the in-memory and the bounded store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { renderText, type DiffResult } from '../../diff/index.js';
import { diffAgreeing } from './diff-bounded.js';
import { capture, uuid, type ExchangeSpec } from '../helpers/har.js';
import { hexId, nanoId } from '../helpers/ids.js';
import { tempDir } from '../helpers/tmp.js';
import { shapeOf } from '../../diff/normalize/shapes.js';
import type { Har, HarGrpcMessage } from '../../capture/har.js';

const tmp = tempDir();
const URL0 = 'http://127.0.0.1:3001';

/** A ULID: 10 time characters, 16 random ones, Crockford base32. */
function ulid(): string {
  const abc = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  return '01J' + [...randomBytes(23)].map((b) => abc[b % 32]).join('');
}
/** A base62 token of 22 characters that reads as generated. */
function base62(): string {
  for (;;) {
    const t = randomBytes(24).toString('base64').replace(/[+/=]/g, '').slice(0, 22);
    if (t.length === 22 && /[0-9]/.test(t) && /[a-z]/.test(t) && /[A-Z]/.test(t)) return t;
  }
}
/** A 6-digit integer id. */
const intId = (): number => 100000 + (randomBytes(3).readUIntBE(0, 3) % 800000);

/** An id of each class, drawn afresh per side; `config` when the class needs one. */
const CLASSES: Array<{ name: string; draw: () => string | number; config?: unknown }> = [
  { name: 'uuid', draw: uuid },
  { name: 'ulid', draw: ulid },
  { name: 'session id', draw: () => `session_${uuid()}` },
  { name: '12 hex', draw: () => hexId() },
  { name: 'nanoid', draw: nanoId },
  { name: 'base62', draw: base62 },
  { name: 'numeric id', draw: intId },
  { name: 'redacted', draw: () => `<redacted:${hexId(4)}>` },
  { name: 'config ordinal', draw: () => `conn_${randomBytes(4).toString('hex')}`, config: { normalize: { patterns: [{ name: 'conn', regex: 'conn_[0-9a-f]{8}', ordinal: 'CONN' }] } } },
];

/** The rows as `KIND PATH OLD → NEW @entry`, sorted. */
const rows = (r: DiffResult): string[] =>
  r.differences.map((d) => `${d.kind} ${d.path} ${JSON.stringify(d.old ?? null)} → ${JSON.stringify(d.new ?? null)} @${d.entry}`).sort();

/** What a scenario makes of the first exchange on one side (`isNew`: the build that sends one more field), holding `id`. */
type Extra = (id: string | number, isNew: boolean) => Partial<ExchangeSpec>;

/**
 * Three exchanges: `/start` (the new build's carries `extra`), then `/me`
 * and `/things`, whose bodies both hold the side's id; `/things/<id>` sends
 * it back (so it is issued, whatever its shape).
 */
function run(id: string | number, extra: Extra, isNew: boolean): ExchangeSpec[] {
  return [
    { url: `${URL0}/start`, body: { ok: true }, ...extra(id, isNew) },
    { url: `${URL0}/me`, body: { userId: id, name: 'ann' } },
    { url: `${URL0}/things`, body: [{ ownerId: id, n: 1 }] },
    // A redaction placeholder stands for a secret, never in a path.
    { url: `${URL0}/things/${String(id).startsWith('<') ? 'mine' : id}`, requestHeaders: [['X-Owner', String(id)]], body: { ownerId: id } },
  ];
}

async function diff(a: Har, b: Har, config?: unknown): Promise<DiffResult> {
  return diffAgreeing(tmp, a, b, config);
}

/** Where the new build's extra field sits. */
const PLACES: Array<{ name: string; extra: Extra; path: RegExp; har?: (h: Har, id: string | number, isNew: boolean) => void }> = [
  { name: 'a response header', extra: (id, isNew) => (isNew ? { responseHeaders: [['X-Owner-Token', String(id)]] } : {}), path: /^added response\.headers\.x-owner-token / },
  { name: 'a body field', extra: (id, isNew) => (isNew ? { body: { ok: true, ownerId: id } } : {}), path: /^added response\.body\.ownerId / },
  { name: 'a Set-Cookie', extra: (id, isNew) => (isNew ? { responseHeaders: [['Set-Cookie', `owner=${id}; Path=/`]] } : {}), path: /^added response\.cookies/ },
  {
    name: 'an earlier WebSocket connection\'s extra message',
    extra: (id, isNew) => ({ url: 'ws://127.0.0.1:3001/live', body: undefined, ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'welcome' } }, ...(isNew ? [{ type: 'receive' as const, data: { type: 'note', ownerId: id } }] : [])] }),
    path: /^extra ws\.messages\[2\] /,
  },
  {
    name: 'an extra WebSocket message before the one both send',
    extra: (id, isNew) => ({ url: 'ws://127.0.0.1:3001/live', body: undefined, ws: [{ type: 'send', data: { type: 'hello' } }, ...(isNew ? [{ type: 'receive' as const, data: { type: 'note', ownerId: id } }] : []), { type: 'receive', data: { type: 'welcome', ownerId: id } }] }),
    path: /^extra ws\.messages\[1\] /,
  },
  {
    name: 'an extra SSE event',
    extra: (id, isNew) => ({ mime: 'text/event-stream', body: `event: hello\ndata: {"ok":true}\n\n${isNew ? `event: note\ndata: ${JSON.stringify({ ownerId: id })}\n\n` : ''}` }),
    path: /^added response\.events\[1\] /,
  },
  {
    name: 'an extra gRPC message',
    extra: () => ({ url: `${URL0}/demo.Items/Watch`, method: 'POST', mime: 'application/grpc', body: '' }),
    har: (h, id, isNew) => {
      const e = h.log.entries[0]!;
      const t = Date.parse(e.startedDateTime) / 1000;
      const msg = (s: string): string => {
        const b = Buffer.from(s);
        return Buffer.concat([Buffer.from([0x0a, b.length]), b]).toString('base64');
      };
      const msgs: HarGrpcMessage[] = [{ type: 'send', time: t, compressed: false, data: msg('watch') }, { type: 'receive', time: t + 0.1, compressed: false, data: msg('ready') }];
      if (isNew) msgs.push({ type: 'receive', time: t + 0.2, compressed: false, data: msg(String(id)) });
      e._grpcMessages = msgs;
      e.response._trailers = [{ name: 'grpc-status', value: '0' }];
    },
    path: /^extra grpc\.messages\[2\] /,
  },
];

/** Both captures of a scenario. */
function pair(x: string | number, y: string | number, p: (typeof PLACES)[number]): [Har, Har] {
  const [a, b] = [capture(run(x, p.extra, false)), capture(run(y, p.extra, true))];
  p.har?.(a, x, false);
  p.har?.(b, y, true);
  return [a, b];
}

describe('an id-bearing field the new build sends earlier shifts no later number', () => {
  for (const c of CLASSES) {
    for (const p of PLACES) {
      it(`${c.name} in ${p.name}`, async () => {
        const [x, y] = [c.draw(), c.draw()];
        const r = await diff(...pair(x, y, p), c.config);
        const found = rows(r);
        assert.equal(found.length, 1, renderText(r, { color: false, rows: true }));
        assert.match(found[0]!, p.path, renderText(r, { color: false, rows: true }));
      });
    }
  }
});

describe('an id never sent back (compared by its shape, not issued) shifts no later number either', () => {
  const echoless = (specs: ExchangeSpec[]) => specs.slice(0, 3);
  for (const c of CLASSES.filter((k) => ['12 hex', 'nanoid', 'base62', 'numeric id'].includes(k.name))) {
    for (const p of PLACES.slice(0, 3)) {
      it(`${c.name} in ${p.name}`, async () => {
        const [x, y] = [c.draw(), c.draw()];
        const r = await diff(capture(echoless(run(x, p.extra, false))), capture(echoless(run(y, p.extra, true))), c.config);
        const found = rows(r);
        assert.equal(found.length, 1, renderText(r, { color: false, rows: true }));
        assert.match(found[0]!, p.path, renderText(r, { color: false, rows: true }));
        assert.doesNotMatch(found[0]!, /ISSUED/, 'compared by shape');
      });
    }
  }
});

describe('what a one-sided field must not hide or shift', () => {
  const bodyField = PLACES.find((p) => p.name === 'a body field')!;

  for (const c of CLASSES) {
    it(`${c.name}: a field the new build no longer sends, holding the id both use later, is the only finding`, async () => {
      const [x, y] = [c.draw(), c.draw()];
      const r = await diff(capture(run(x, bodyField.extra, true)), capture(run(y, bodyField.extra, false)), c.config);
      assert.deepEqual(rows(r).map((l) => l.split(' ').slice(0, 2).join(' ')), ['removed response.body.ownerId'], renderText(r, { color: false, rows: true }));
    });

    it(`${c.name}: a call only the new build makes, earlier, naming the id both use later, is the only finding`, async () => {
      const [x, y] = [c.draw(), c.draw()];
      const none: Extra = () => ({});
      const b = run(y, none, true);
      b.splice(1, 0, { url: `${URL0}/prefetch`, body: { ownerId: y } });
      const r = await diff(capture(run(x, none, false)), capture(b), c.config);
      assert.deepEqual(r.differences.map((d) => `${d.kind} @${d.entry}`), ['extra @/GET /prefetch#1'], renderText(r, { color: false, rows: true }));
    });

    it(`${c.name}: an earlier one-sided field does not hide a later id that breaks its correspondence`, async () => {
      const [x, y, z] = [c.draw(), c.draw(), c.draw()];
      const b = run(y, bodyField.extra, true);
      // The new build's /me names another id than the one it sends everywhere else.
      b[1] = { ...b[1]!, body: { userId: z, name: 'ann' } };
      const r = await diff(capture(run(x, bodyField.extra, false)), capture(b), c.config);
      const found = rows(r);
      assert.ok(found.some((l) => l.startsWith('added response.body.ownerId ')), renderText(r, { color: false, rows: true }));
      assert.ok(found.some((l) => l.startsWith('changed ')), renderText(r, { color: false, rows: true }));
    });
    it(`${c.name}: a field the new build no longer sends hides no later break: the rows are those without it, and its own`, async () => {
      const [x, y, z] = [c.draw(), c.draw(), c.draw()];
      // The new build names another id in /me than everywhere else, where the old one named one id throughout.
      const b = run(y, bodyField.extra, false);
      b[1] = { ...b[1]!, body: { userId: z, name: 'ann' } };
      const without = rows(await diff(capture(run(x, bodyField.extra, false)), capture(b), c.config));
      const r = await diff(capture(run(x, bodyField.extra, true)), capture(b), c.config);
      assert.ok(without.some((l) => l.startsWith('changed ')), without.join('\n'));
      const removed = rows(r).filter((l) => l.startsWith('removed response.body.ownerId '));
      assert.equal(removed.length, 1, renderText(r, { color: false, rows: true }));
      assert.deepEqual(rows(r).filter((l) => !removed.includes(l)), without, renderText(r, { color: false, rows: true }));
    });
  }

  // The old build sends the id in `ownerId`, the new build the same id in `owner`: each side's field is one-sided.
  const renamed: Extra = (id, isNew) => ({ body: isNew ? { ok: true, owner: id } : { ok: true, ownerId: id } });
  for (const c of CLASSES) {
    it(`${c.name}: a field renamed in an early entry, holding the id both use later, is its two rows only`, async () => {
      const [x, y] = [c.draw(), c.draw()];
      const r = await diff(capture(run(x, renamed, false)), capture(run(y, renamed, true)), c.config);
      assert.deepEqual(rows(r).map((l) => l.split(' ').slice(0, 2).join(' ')), ['added response.body.owner', 'removed response.body.ownerId'], renderText(r, { color: false, rows: true }));
    });

    it(`${c.name}: a renamed field hides no later break: an id that met its partner keeps it`, async () => {
      const [x, y, z] = [c.draw(), c.draw(), c.draw()];
      const b = run(y, renamed, true);
      // The new build's /me names another id than the one it sends everywhere else.
      b[1] = { ...b[1]!, body: { userId: z, name: 'ann' } };
      const r = await diff(capture(run(x, renamed, false)), capture(b), c.config);
      assert.ok(rows(r).some((l) => l.startsWith('changed ')), renderText(r, { color: false, rows: true }));
    });
  }

  it('a fresh id on every response of the new build is one added row per response, and shifts nothing', async () => {
    const trace = (): Extra => () => ({});
    const [x, y] = [uuid(), uuid()];
    const b = run(y, trace(), true).map((e) => ({ ...e, responseHeaders: [['X-Trace', uuid()]] as Array<[string, string]> }));
    const r = await diff(capture(run(x, trace(), false)), capture(b));
    const found = rows(r);
    assert.equal(found.length, 4, renderText(r, { color: false, rows: true }));
    assert.ok(found.every((l) => l.startsWith('added response.headers.x-trace ')), renderText(r, { color: false, rows: true }));
  });
});

describe('a random id whose letters read as words on one side only', () => {
  // Each was drawn at random and reads as words to the generated-ids rule (shapes.ts looksGenerated): the
  // first failed a browser test of this repository once in ~30 runs, as a Socket.IO socket id.
  const misread = ['RmkWEnaz5AtndrOvwstk', 'eMBUFKerueLcoJifTCNZ'];
  // The other side's id must read as generated: about one draw in 1,400 reads as words too, and two ids read as
  // words are two texts (each such draw failed one of these tests in ~1 % of runs).
  const generated = (): string => {
    for (;;) {
      const id = randomBytes(15).toString('base64url');
      if (/^[A-Za-z0-9]+$/.test(id) && /\d/.test(id) && /[a-z]/.test(id) && /[A-Z]/.test(id) && shapeOf(id) === 'B64_20') return id;
    }
  };
  const session = (id: string): ExchangeSpec[] => [
    { url: `${URL0}/connect`, body: [{ type: 'connect', data: { sid: id } }] },
    { url: 'ws://127.0.0.1:3001/live', body: undefined, ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'message', args: [{ text: 'hi', from: id }] } }] },
    { url: `${URL0}/members`, body: { members: [id, 'bob'], links: { self: `${URL0}/members/${id}/profile` } } },
  ];

  for (const id of misread) {
    it(`${id} is compared as the shape the other side's id has, wherever it sits (a body, a WebSocket message, an array, inside a link): MATCH`, async () => {
      for (const [a, b] of [[generated(), id], [id, generated()]] as const) {
        const r = await diff(capture(session(a)), capture(session(b)));
        assert.deepEqual(rows(r), [], renderText(r, { color: false, rows: true }));
      }
    });
  }

  it('one of two ids in one string read as words on one side (a link naming a member and an order): compared as the other side\'s shape: MATCH', async () => {
    const linked = (member: string, order: string): ExchangeSpec[] => [{ url: `${URL0}/orders/last`, body: { links: { self: `${URL0}/members/${member}/orders/${order}` }, token: `${member}.${order}` } }];
    for (const [a, b] of [[linked(generated(), generated()), linked(generated(), misread[0]!)], [linked(misread[1]!, generated()), linked(generated(), generated())]] as const) {
      const r = await diff(capture(a), capture(b));
      assert.deepEqual(rows(r), [], renderText(r, { color: false, rows: true }));
    }
  });

  it('a body of thousands of ids, some read as words on one side: compared as it is, without reading it as a pattern (it overflowed the stack)', async () => {
    const blob = (n: number, words: number) => Array.from({ length: n }, (_, i) => (i < words ? misread[i % 2]! : generated())).join('+');
    const r = await diff(capture([{ url: `${URL0}/blob`, body: { blob: blob(5000, 0) } }]), capture([{ url: `${URL0}/blob`, body: { blob: blob(5000, 3) } }]));
    assert.deepEqual(r.differences.map((d) => `${d.kind} ${d.path}`), ['changed response.body.blob']);
  });

  it('a random 12-hex id that drew no letter (digits alone, never a hex shape) is compared as the other side\'s hex id: MATCH', async () => {
    const digits = '938475610293';
    for (const [a, b] of [[hexId(), digits], [digits, hexId()]] as const) {
      const r = await diff(capture(session(a)), capture(session(b)));
      assert.deepEqual(rows(r), [], renderText(r, { color: false, rows: true }));
    }
  });

  // An id the client made up (not issued by the server: nothing binds it) in a request's path is in the entry's
  // pairing key: read as words on one side, the key was the other side's but for it, and the two were a missing
  // and an extra (diff/pair.ts keysWithMisreadIds).
  const madeUp = (id: string): ExchangeSpec[] => [
    { url: `${URL0}/rooms`, body: { rooms: 2 } },
    { method: 'PUT', url: `${URL0}/rooms/${id}`, body: { ok: true } },
    { url: `${URL0}/rooms/${id}/members?after=${id}`, body: { members: ['bob'] } },
    { url: `${URL0}/health`, body: 'ok' },
  ];
  for (const [what, misreadId, other] of [['base62', misread[0]!, generated], ['12-hex, digits alone', '938475610293', hexId]] as const) {
    it(`a made-up ${what} id in request paths (pairing keys) pairs with the other side's entries: MATCH`, async () => {
      for (const [a, b] of [[other(), misreadId], [misreadId, other()]] as const) {
        const r = await diff(capture(madeUp(a)), capture(madeUp(b)));
        assert.deepEqual(r.pairs.map((p) => p.status), ['paired', 'paired', 'paired', 'paired'], renderText(r, { color: false, rows: true }));
        assert.deepEqual(rows(r), [], renderText(r, { color: false, rows: true }));
      }
    });
  }

  it('a path that is the other side\'s but for a word, or an id of another length, still pairs with nothing', async () => {
    const r = await diff(capture(madeUp(generated())), capture([
      { url: `${URL0}/rooms`, body: { rooms: 2 } },
      { method: 'PUT', url: `${URL0}/rooms/internationalization`, body: { ok: true } },
      { url: `${URL0}/rooms/${generated().slice(0, 18)}/members?after=x`, body: { members: ['bob'] } },
      { url: `${URL0}/health`, body: 'ok' },
    ]));
    assert.deepEqual(r.pairs.map((p) => p.status).sort(), ['extra', 'extra', 'missing', 'missing', 'paired', 'paired'], renderText(r, { color: false, rows: true }));
  });

  it('is still a change where it stands for another value: the other side holds a word, a number, or an id of another length', async () => {
    const r = await diff(capture(session(generated())), capture([
      { url: `${URL0}/connect`, body: [{ type: 'connect', data: { sid: 'internationalization' } }] },
      { url: 'ws://127.0.0.1:3001/live', body: undefined, ws: [{ type: 'send', data: { type: 'hello' } }, { type: 'receive', data: { type: 'message', args: [{ text: 'hi', from: '12345678901234567890' }] } }] },
      { url: `${URL0}/members`, body: { members: [misread[0]!.slice(0, 19), 'bob'], links: { self: `${URL0}/people/${misread[0]}/profile` } } },
    ]));
    assert.deepEqual(rows(r).map((x) => x.split(' ').slice(0, 2).join(' ')), ['changed response.body.links.self', 'changed response.body.members[0]', 'changed response.body[0].data.sid', 'changed ws.messages[1].data.args[0].from']);
  });
});
