// Which values the server issued and the client sent back bind: made values,
// not the words of a protocol (an Engine.IO handshake offers "websocket" and
// the client asks for ?transport=websocket).
import { describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { boundAbsent, boundAlike, boundExcept, boundSet, boundValues, markIssued } from '../../../diff/bind/bound.js';
import { madeNotWord } from '../../../diff/bind/issued.js';
import type { HarEntry } from '../../../capture/index.js';
import { encodeItem, type ItemValue } from '../../helpers/grpc-items.js';
import { capture, type ExchangeSpec } from '../../helpers/har.js';
import { tempDir } from '../../helpers/tmp.js';
import { diffCaptures, renderText } from '../../../diff/index.js';

describe('values two runs issued alike are left unbound', () => {
  it('boundAlike keeps what both runs bound but the ids among them; boundExcept leaves it out of a side, and returns the side as it is when none', () => {
    const a = new Set(['1999', 'p_1f3a9c', '1000', '3001']);
    const b = new Set(['1999', 'p_77e0b2', '1000', 'sid9f2e', '3001']);
    assert.deepEqual([...boundAlike({ values: a }, { values: b })].sort(), ['1000', '1999', '3001']);
    // A fixed product's id, read as GET /products/3001 by either run's client, keeps its binding.
    assert.deepEqual([...boundAlike({ values: a, ids: new Set(['3001']) }, { values: b, ids: new Set() })].sort(), ['1000', '1999']);
    assert.deepEqual([...boundExcept(b, boundAlike({ values: a }, { values: b }))].sort(), ['p_77e0b2', 'sid9f2e']);
    assert.equal(boundExcept(a, new Set()), a);
    assert.equal(boundExcept(a, undefined), a);
  });

  it('boundSet with ids names the bound values that are ids by where they stood: sent in a path, issued under an id key', () => {
    const entries = capture([
      // `batch` says neither id nor quantity (a `price` would not bind at all: quantityKey).
      { method: 'GET', url: 'http://api.test/featured', body: { items: [{ sku: 3001, batch: 1999 }], productIds: [4001], owner_id: 'u_9f2e71', note: 'x' } },
      { method: 'GET', url: 'http://api.test/products/3001?limit=1999&p=4001&o=u_9f2e71', body: {} },
    ]).log.entries;
    const found = boundSet(entries, undefined, true);
    assert.deepEqual([...found.values].sort(), ['1999', '3001', '4001', 'u_9f2e71']);
    assert.deepEqual([...found.ids!].sort(), ['3001', '4001', 'u_9f2e71']);
    assert.equal(boundSet(entries, undefined, false).ids, undefined);
  });
});

describe('a bound value is made, not a word', () => {
  it('binds values with a digit or inner capitals, never plain words', () => {
    const made = ['4821', 'a1b2c3d4e5f6', 'V1StGXR8_Z5jdHi6B-myT', 'xK9fQ2pL', 'sessionAbC', 'tok_9', 'kqzvmxab', 'abc-mnop-xyz', 'QWPZKXTB'];
    const words = ['websocket', 'polling', 'Bearer', 'active', 'Inactive', 'READY', 'in_stock', 'keepalive', 'transport', 'localhost', 'javascript', 'multipart', 'urlencoded', 'IN_PROGRESS', 'authorization'];
    assert.deepEqual(made.filter((v) => !madeNotWord(v)), []);
    assert.deepEqual(words.filter(madeNotWord), []);
  });

  it('binds random ids of one-case letters (a lower-case alphabet) nearly always, and short ones never', () => {
    const draw = (n: number, abc: string) => Array.from({ length: n }, () => abc[Math.floor(Math.random() * abc.length)]).join('');
    const lower = 'abcdefghijklmnopqrstuvwxyz';
    const share = (n: number, abc: string) => Array.from({ length: 20_000 }, () => draw(n, abc)).filter(madeNotWord).length / 20_000;
    // Expected 0.97 and 0.99 (shapes.ts lettersReadRandom); the bounds leave room for the draw.
    assert.ok(share(8, lower) > 0.95, `8 letters: ${share(8, lower)}`);
    assert.ok(share(10, lower.toUpperCase()) > 0.97, `10 capitals: ${share(10, lower.toUpperCase())}`);
    assert.equal(share(7, lower), 0);
  });
});

describe('an id of letters alone binds', () => {
  const t = tempDir();
  const origin = 'http://127.0.0.1:4000';
  // POST /links issues a slug; the client reads it back by its path.
  const run = (slug: string, transport = 'websocket') =>
    capture([
      { method: 'POST', url: `${origin}/links`, requestBody: { url: 'http://x/a' }, status: 201, body: { slug, url: 'http://x/a', upgrades: [transport] } },
      { url: `${origin}/links/${slug}?transport=${transport}`, body: { slug, url: 'http://x/a' } },
    ]);
  const diff = async (a: unknown, b: unknown) => diffCaptures(await t.write(`a-${Math.random()}.har`, a), await t.write(`b-${Math.random()}.har`, b), {});

  it('a lower-case slug made up on each run compares equal; a protocol word the server offers and the client sends back stays a word', async () => {
    for (const [a, b] of [['kqzvmxab', 'pdjwhfto'], ['abc-mnop-xyz', 'qrs-tuvw-bcd'], ['ZKQWPTXV', 'MJQBDXRF']]) {
      const r = await diff(run(a!), run(b!));
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    }
    // `websocket` became `polling`: offered and sent back, the change still shows where it is.
    const r = await diff(run('kqzvmxab'), run('pdjwhfto', 'polling'));
    assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), ['real changed request.query.transport', 'real changed response.body.upgrades[]']);
  });
});

describe('a standard-base64 cursor the client sends back URL-encoded binds whole', () => {
  const t = tempDir();
  const origin = 'http://127.0.0.1:4000';
  // Twelve pages: each answer but the last issues a random cursor (whether it shows a `+` or `/`, and where, varies
  // from draw to draw); the client sends it back encoded in the query, the last one in a JSON body. `sent` overrides what the
  // client sent back on one page (a client that lost its place).
  const run = (status = 'open', sent: Record<number, string> = {}) => {
    const cursors = Array.from({ length: 12 }, () => randomBytes(18).toString('base64'));
    return capture(
      cursors.map((_, i) => {
        const back = i === 0 ? undefined : (sent[i] ?? cursors[i - 1]!);
        const body = { page: i, status, next: i === 11 ? null : cursors[i] };
        if (i === 11) return { method: 'POST', url: `${origin}/feed`, requestBody: { cursor: back }, body };
        return { url: `${origin}/feed${back === undefined ? '' : `?cursor=${encodeURIComponent(back)}`}`, body };
      }),
    );
  };
  const diff = async (a: unknown, b: unknown) => diffCaptures(await t.write(`a-${Math.random()}.har`, a), await t.write(`b-${Math.random()}.har`, b), {});

  it('two runs of one build compare equal, draw after draw', async () => {
    for (let k = 0; k < 10; k++) {
      const r = await diff(run(), run());
      assert.equal(r.verdict, 'match', renderText(r, { color: false }));
    }
  });

  it('a changed field is still found, and a cursor sent back that was not the one issued breaks its binding', async () => {
    const changed = await diff(run(), run('active'));
    assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['real changed response.body.status']);
    const stray = randomBytes(18).toString('base64');
    const lost = await diff(run(), run('open', { 5: stray }));
    const query = lost.findings.find((f) => f.pattern === 'request.query.cursor');
    assert.equal(query?.class, 'real', renderText(lost, { color: false }));
    assert.equal(query.new, stray);
  });
});

describe('boundAbsent: the quick pass before markIssued', () => {
  it('says absent only where markIssued would change nothing, and gives up past 16 values', () => {
    const bound = new Set(['1999', 'sess_9f8e7d', 'a/b+c==', '4witsO+F3O6FXo0Vt+i6+x/n']);
    const absent = boundAbsent(bound)!;
    const mark = (v: string) => `<${v}>`;
    // A base64 value percent-encoded in a URL is found by markIssued (diff/normalize/shapes.ts base64Runs).
    const strings = ['1999', 'id 1999 here', '/items/19990', 'x=sess_9f8e7d;', 'a/b+c==', 'nothing', '', '199', 'sess_9f8e7', 'a/b+c=', '/feed?cursor=4witsO%2bF3O6FXo0Vt%2Bi6%2Bx%2Fn'];
    for (const s of strings) if (absent(s)) assert.equal(markIssued(s, bound, mark), s, s);
    assert.deepEqual(strings.filter(absent), ['nothing', '', '199', 'sess_9f8e7', 'a/b+c=']);
    assert.equal(markIssued(strings.at(-1)!, bound, mark), '/feed?cursor=<4witsO+F3O6FXo0Vt+i6+x/n>');
    assert.equal(boundAbsent(new Set(Array.from({ length: 17 }, (_, i) => `v${i}xx`))), undefined);
  });
});

describe('values under keys that name quantities', () => {
  it('quantityKey reads the last word of a key in any of its spellings; account and checksum name none', async () => {
    const { quantityKey } = await import('../../../diff/bind/issued.js');
    const yes = ['price', 'Price', 'PRICE', 'price_cents', 'unitPrice', 'unit-price', 'maxPageSize', 'itemCount', 'limit', 'total', 'subtotal', 'discounts', 'qty', 'stock', 'PAGE_SIZE', 'weight2Length'];
    const no = ['id', 'productId', 'account', 'checksum', 'discounted', 'sizeId', 'pricing', 'token', 'cursor', 'page', 'version', 'orderNumber', 'totally'];
    assert.deepEqual(yes.filter((k) => !quantityKey(k)), []);
    assert.deepEqual(no.filter((k) => quantityKey(k)), []);
  });

  it('a price and a page size the client echoes do not bind; an id beside them does, and so does the same number issued under an id key', () => {
    const entries = capture([
      { url: 'http://shop.test/product', body: { id: 'lamp_7f3a9b', price_cents: 1999, maxPageSize: 1000, prices: [2999, 3999] } },
      { method: 'POST', url: 'http://shop.test/cart', requestBody: { product: 'lamp_7f3a9b', price_cents: 1999, also: 2999 }, body: { ok: true } },
      { url: 'http://shop.test/reviews?limit=1000', body: { items: [] } },
    ]).log.entries;
    assert.deepEqual([...boundValues(entries)].sort(), ['lamp_7f3a9b']);
    // The same number also issued under an id key is an id there: bound.
    const both = capture([{ url: 'http://shop.test/product', body: { total: 4711, orderId: 4711 } }, { url: 'http://shop.test/orders/4711' }]).log.entries;
    assert.deepEqual([...boundValues(both)], ['4711']);
  });
});

describe('gRPC calls on the timeline', () => {
  // A gRPC call's entry: its messages in the order they crossed (Item { name = 1, n = 2 }).
  const call = (path: string, messages: Array<['send' | 'receive', ItemValue]>): HarEntry =>
    ({
      request: { method: 'POST', url: `http://127.0.0.1:1${path}`, httpVersion: 'HTTP/2', headers: [{ name: 'content-type', value: 'application/grpc' }], cookies: [], queryString: [], headersSize: -1, bodySize: 0 },
      response: { status: 200, statusText: '', httpVersion: 'HTTP/2', headers: [{ name: 'content-type', value: 'application/grpc' }], cookies: [], content: { size: 0, mimeType: 'application/grpc' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      _grpcMessages: messages.map(([type, v]) => ({ type, time: 0, compressed: false, data: encodeItem(v).toString('base64') })),
    }) as unknown as HarEntry;

  it('binds an id a unary answer issued and a later call sent back, string or integer', () => {
    const entries = [
      call('/demo.Items/Create', [['send', { name: 'widget', n: 1 }], ['receive', { name: 'item_9f8e7d6c', n: 48213 }]]),
      call('/demo.Items/Get', [['send', { name: 'item_9f8e7d6c', n: 48213 }], ['receive', { name: 'widget', n: 5 }]]),
    ];
    assert.deepEqual([...boundValues(entries)].sort(), ['48213', 'item_9f8e7d6c']);
  });

  it("binds in a bidi call's message order: what a server message issued and a later client message sent, not what the client sent first", () => {
    const chat = call('/demo.Items/Chat', [
      ['send', { name: 'mine_1a2b3c', n: 0 }],
      ['receive', { name: 'ticket_77aa88', n: 0 }],
      ['receive', { name: 'echo mine_1a2b3c', n: 0 }],
      ['send', { name: 'ticket_77aa88', n: 0 }],
    ]);
    assert.deepEqual([...boundValues([chat])], ['ticket_77aa88']);
  });
});

describe('a value an open stream issued, sent back before the stream ended', () => {
  // Entries in file order (the order they ended): the read ended while the event stream was still open.
  const at = (ms: number) => new Date(Date.parse('2026-12-05T10:00:00.000Z') + ms).toISOString();
  const exchange = (url: string, startMs: number, timeMs: number, more: Partial<HarEntry> = {}): HarEntry =>
    ({
      startedDateTime: at(startMs),
      time: timeMs,
      request: { method: 'GET', url: `http://127.0.0.1:1${url}`, httpVersion: 'HTTP/1.1', headers: [], cookies: [], queryString: [], headersSize: -1, bodySize: 0 },
      response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [], cookies: [], content: { size: 0, mimeType: 'application/json', text: '{}' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      ...more,
    }) as HarEntry;
  const epochS = (ms: number) => Date.parse(at(ms)) / 1000;
  const queue = (eventAtMs: number) =>
    exchange('/queue', 0, 5000, {
      response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'text/event-stream' }], cookies: [], content: { size: 0, mimeType: 'text/event-stream' }, redirectURL: '', headersSize: -1, bodySize: 0 },
      _eventSourceMessages: [{ time: epochS(eventAtMs), eventName: 'message', eventId: '', data: '{"ticket":1000}' }],
    });

  it("binds a ticket an event issued and a read on another connection sent back while the stream went on", () => {
    assert.deepEqual([...boundValues([exchange('/tickets/1000', 1000, 20), queue(500)])], ['1000']);
  });

  it('does not bind what the client sent before the event issued it, nor what an exchange that ended before the event sent', () => {
    // Started before the event: the client's own value, echoed.
    assert.deepEqual([...boundValues([exchange('/tickets/1000', 400, 200), queue(500)])], []);
    // Ended before the stream's first event: nothing of the stream was out yet.
    assert.deepEqual([...boundValues([exchange('/tickets/1000', 100, 20), queue(500)])], []);
  });

  it("binds a WebSocket's ticket sent back on another connection while the socket stayed open; client messages sent by their own time", () => {
    // A WebSocket entry's time is its handshake's; the conversation lasts until its close.
    const socket = exchange('/desk', 0, 1, {
      _webSocketMessages: [{ type: 'receive', time: epochS(100), opcode: 1, data: '{"ticket":"t_4f2a9b"}' }],
      _bb: { seq: 1, close: { code: 1000, reason: '', by: 'client', time: epochS(9000) } },
    });
    const chat = exchange('/chat', 50, 2000, {
      _webSocketMessages: [
        { type: 'send', time: epochS(60), opcode: 1, data: '{"hello":"t_77aa88"}' },
        { type: 'send', time: epochS(900), opcode: 1, data: '{"use":"t_4f2a9b"}' },
      ],
    });
    assert.deepEqual([...boundValues([chat, socket])], ['t_4f2a9b']);
    // The same use before the ticket's message: the client's own.
    const early = exchange('/chat', 50, 2000, { _webSocketMessages: [{ type: 'send', time: epochS(60), opcode: 1, data: '{"use":"t_4f2a9b"}' }] });
    assert.deepEqual([...boundValues([early, socket])], []);
  });

  it("orders a read that started in the socket message's millisecond by bb's µs start: after the message it binds, before it it does not", () => {
    // The message crossed at 100.044 ms; startedDateTime names the read's millisecond, 100, whichever side of it the read was.
    const t0 = Date.parse(at(0));
    const socket = exchange('/desk', 0, 1, {
      _webSocketMessages: [{ type: 'receive', time: (t0 + 100.044) / 1000, opcode: 1, data: '{"ticket":"t_4f2a9b"}' }],
      _bb: { seq: 1, close: { code: 1000, reason: '', by: 'client', time: epochS(9000) } },
    });
    const read = (started?: number) => exchange('/tickets/t_4f2a9b', 100, 1, started === undefined ? {} : { _bb: { seq: 2, started: t0 + started } });
    assert.deepEqual([...boundValues([read(100.871), socket])], ['t_4f2a9b']);
    assert.deepEqual([...boundValues([read(100.012), socket])], []);
    // Without it (another tool's HAR), the millisecond is all there is: the read reads as before the message.
    assert.deepEqual([...boundValues([read(), socket])], []);
    // A start edited to another millisecond is taken as edited: the µs that no longer agree are not used.
    const moved = { ...read(100.871), startedDateTime: at(50) };
    assert.deepEqual([...boundValues([moved, socket])], []);
  });

  it('does not bind a name the client joined a socket with, echoed by the server, then read on another connection', () => {
    const chat = exchange('/chat', 0, 1, {
      _webSocketMessages: [
        { type: 'send', time: epochS(10), opcode: 1, data: '{"join":"bob42"}' },
        { type: 'receive', time: epochS(20), opcode: 1, data: '{"joined":"bob42"}' },
      ],
      _bb: { seq: 1, close: { code: 1000, reason: '', by: 'client', time: epochS(9000) } },
    });
    assert.deepEqual([...boundValues([exchange('/users/bob42', 1000, 20), chat])], []);
    // Handed out by the server first, it binds.
    const desk = exchange('/chat', 0, 1, {
      _webSocketMessages: [{ type: 'receive', time: epochS(20), opcode: 1, data: '{"name":"bob42"}' }],
      _bb: { seq: 1, close: { code: 1000, reason: '', by: 'client', time: epochS(9000) } },
    });
    assert.deepEqual([...boundValues([exchange('/users/bob42', 1000, 20), desk])], ['bob42']);
  });
});

// bb shadow's captures: the primary's holds the exchanges the shadow did not mirror (a POST, by default), the mirrors'
// do not. A value the client chose in one of them (a name it signed up with) is its own on the primary's side; a
// mirror read on its own would see it issued first (a later answer echoes it) and sent back, and bind it there alone:
// primary and secondary would differ where they agree, and a change of the candidate read as noise.
describe('a shadow mirror capture binds with what the client sent in exchanges it did not get', () => {
  const t = tempDir();
  const shadowCapture = (label: string, specs: Array<ExchangeSpec & { id: number; skipped?: string }>) => {
    const h = capture(specs);
    h.log._bb!.label = label;
    h.log.entries.forEach((e, i) => (e._bb!.shadow = { id: specs[i]!.id, ...(specs[i]!.skipped ? { skipped: specs[i]!.skipped } : {}) }));
    return h;
  };
  const origin = 'http://127.0.0.1:4000';
  const signUp = { method: 'POST', url: `${origin}/users`, requestBody: { username: 'erin42' }, status: 201, body: { username: 'erin42' }, id: 1, skipped: 'unsafe' };
  const me = (name: string) => ({ url: `${origin}/me`, body: { me: name }, id: 2 });
  const read = (name: string) => ({ url: `${origin}/users/erin42`, body: { username: name }, id: 3 });
  const primary = shadowCapture('primary', [signUp, me('erin42'), read('erin42')]);
  const secondary = shadowCapture('secondary', [me('erin42'), read('erin42')]);
  const candidate = shadowCapture('candidate', [me('Erin42'), read('Erin42')]);
  const file = (name: string, doc: unknown) => t.write(`${name}-${Math.random()}.har`, doc);

  for (const options of [{}, { boundedThreshold: 0, workers: false }, { boundedThreshold: 0, workers: true }]) {
    it(`the primary and the secondary agree; the candidate's change is real, not noise ${JSON.stringify(options)}`, async () => {
      const [p, s, c] = [await file('primary', primary), await file('secondary', secondary), await file('candidate', candidate)];
      const same = await diffCaptures(p, s, options);
      assert.equal(same.verdict, 'match', renderText(same, { color: false }));
      // Either way round: the side that is the primary is known by its label.
      assert.equal((await diffCaptures(s, p, options)).verdict, 'match');
      const r = await diffCaptures(p, c, { ...options, noisePath: s });
      assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`).sort(), ['real changed response.body.me', 'real changed response.body.username']);
    });

    it(`an id a request that was not mirrored created, read back by a mirrored one, binds on both sides ${JSON.stringify(options)}`, async () => {
      // The relay sent the primary's id to the candidate as it was (no counterpart): the reads are the same request.
      const create = { method: 'POST', url: `${origin}/items`, requestBody: { name: 'lamp' }, status: 201, body: { id: 'it_8f3a2', name: 'lamp' }, id: 1, skipped: 'unsafe' };
      const readItem = (name: string) => ({ url: `${origin}/items/it_8f3a2`, body: { id: 'it_8f3a2', name }, id: 2 });
      const p = await file('primary', shadowCapture('primary', [create, readItem('lamp')]));
      const same = await diffCaptures(p, await file('candidate', shadowCapture('candidate', [readItem('lamp')])), options);
      assert.equal(same.verdict, 'match', renderText(same, { color: false }));
      // A real change of the read still shows, paired.
      const changed = await diffCaptures(p, await file('candidate', shadowCapture('candidate', [readItem('Lamp')])), options);
      assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['real changed response.body.name']);
    });

    it(`an id a request that was not mirrored created binds though a mirror's event stream was written after later entries ${JSON.stringify(options)}`, async () => {
      // A mirror's event stream is written when the target's stream ended, after entries the primary ended later
      // (they do not wait for it): the mirror's timeline must not read the create as if before the stream.
      const feed = { url: `${origin}/events`, body: 'data: {"n":1}\n\n', mime: 'text/event-stream', id: 1 };
      const create = { method: 'POST', url: `${origin}/orders`, requestBody: {}, status: 201, body: { id: 'ord_5f1c9' }, id: 2, skipped: 'unsafe' };
      const readOrder = (state: string) => ({ url: `${origin}/orders/ord_5f1c9`, body: { id: 'ord_5f1c9', state }, id: 3 });
      const asStream = (e: HarEntry) => {
        e._eventSourceMessages = [{ time: Date.parse(e.startedDateTime) / 1000, eventName: 'message', eventId: '', data: '{"n":1}' }];
      };
      const primaryDoc = shadowCapture('primary', [feed, create, readOrder('open')]);
      asStream(primaryDoc.log.entries[0]!);
      const p = await file('primary', primaryDoc);
      for (const [state, want] of [['open', []], ['closed', ['real changed response.body.state']]] as const) {
        const candidateDoc = shadowCapture('candidate', [readOrder(state), feed]);
        asStream(candidateDoc.log.entries[1]!);
        const r = await diffCaptures(p, await file('candidate', candidateDoc), options);
        assert.deepEqual(r.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), want, renderText(r, { color: false }));
      }
    });

    it(`an id a mirrored answer issued, read back only by a request that was not mirrored, binds on both sides ${JSON.stringify(options)}`, async () => {
      // The list was mirrored (each target issued its own id); the read of it was sampled out (another session), so
      // only the primary's capture holds it, sending the primary's id. The candidate's id at the same place is what
      // that read stood for (the live comparison binds it through the relay's counterpart): bound there too. Before,
      // it was <ISSUED> on one side and compared as written on the other.
      const list = (item: string, name = 'lamp') => ({ url: `${origin}/items`, body: { items: [{ id: item, name }] }, id: 1 });
      const read = { url: `${origin}/items/it_8f3a2`, body: { id: 'it_8f3a2', name: 'lamp' }, id: 2, skipped: 'sampled out' };
      const p = await file('primary', shadowCapture('primary', [list('it_8f3a2'), read]));
      const same = await diffCaptures(p, await file('candidate', shadowCapture('candidate', [list('it_77b1c')])), options);
      assert.equal(same.verdict, 'match', renderText(same, { color: false }));
      // A real change beside the id still shows.
      const changed = await diffCaptures(p, await file('candidate', shadowCapture('candidate', [list('it_77b1c', 'Lamp')])), options);
      assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['real changed response.body.items[].name']);
    });

    it(`a ticket a socket that was not mirrored issued, read back by a mirrored request while it stayed open, binds on both sides ${JSON.stringify(options)}`, async () => {
      // The socket was sampled out: the primary's capture holds it (it ended last), the candidate's does not. The
      // client read the ticket on another connection while the socket went on: issued first, then sent back.
      const socket = { url: 'ws://127.0.0.1:4000/desk', ws: [{ type: 'receive' as const, data: { ticket: 't_4f2a9b' } }], id: 1, skipped: 'sampled out' };
      const readTicket = (state: string) => ({ url: `${origin}/tickets/t_4f2a9b`, body: { ticket: 't_4f2a9b', state }, id: 2 });
      const primaryDoc = shadowCapture('primary', [readTicket('open'), socket]);
      // The socket opened first and its message crossed before the read started; it ended after the read.
      const [read, desk] = primaryDoc.log.entries as [HarEntry, HarEntry];
      const opened = Date.parse(read.startedDateTime) - 1000;
      desk.startedDateTime = new Date(opened).toISOString();
      desk.time = 9000;
      desk._webSocketMessages![0]!.time = (opened + 100) / 1000;
      const p = await file('primary', primaryDoc);
      const candidateDoc = shadowCapture('candidate', [readTicket('open')]);
      candidateDoc.log.entries[0]!.startedDateTime = read.startedDateTime;
      const same = await diffCaptures(p, await file('candidate', candidateDoc), options);
      assert.equal(same.verdict, 'match', renderText(same, { color: false }));
      const changedDoc = shadowCapture('candidate', [readTicket('closed')]);
      changedDoc.log.entries[0]!.startedDateTime = read.startedDateTime;
      const changed = await diffCaptures(p, await file('candidate', changedDoc), options);
      assert.deepEqual(changed.findings.map((f) => `${f.class} ${f.kind} ${f.pattern}`), ['real changed response.body.state']);
    });
  }
});
