// Writing the HAR of a capture closed with several long WebSocket
// conversations still open (a long `bb capture` or `bb shadow` run ends so):
// the writer holds one conversation's messages at a time, not every open
// one's, and writes the entries it would have written holding them all.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { closeSync, copyFileSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket, { WebSocketServer } from 'ws';
import { startProxy, FactBus } from '../../proxy/index.js';
import { indexCapture, openCapture, redactorFor } from '../../capture/index.js';
import { writeHarFromJournal, entryContext } from '../../capture/writer.js';
import { EntryAssembler, WS_HELD } from '../../capture/entry-assembly.js';
import { unfoldRecord } from '../../capture/journal-fold.js';
import { parseJournalLine, type HeaderRecord, type JournalRecord } from '../../capture/journal.js';
import { buildEntry } from '../../capture/to-har.js';
import type { Har, HarEntry } from '../../capture/har.js';
import { tempDir } from '../helpers/tmp.js';
import { exchange } from './capture-harness.js';

const tmp = tempDir();

/** Conversations still open when the capture is closed, and the messages each client sends (each echoed). */
const OPEN = 4;
const SENT = 300;

/** The entries of a journal built with every open exchange held whole (no read-back): what the writer wrote before. */
function entriesHeldWhole(journalPath: string, bodiesPath: string): HarEntry[] {
  const lines = readFileSync(journalPath, 'utf8').split('\n');
  const header = parseJournalLine(lines[0]!) as HeaderRecord;
  const bodies = openSync(bodiesPath, 'r');
  const ctx = entryContext(header, redactorFor(header, tmp.bbHome), bodies);
  const assembler = new EntryAssembler();
  const out: HarEntry[] = [];
  for (const line of lines.slice(1)) {
    const rec = parseJournalLine(line);
    if (!rec) continue;
    for (const r of unfoldRecord(rec as JournalRecord)) {
      const done = assembler.feed(r);
      if (done?.kind === 'entry') out.push(buildEntry(done.exchange, ctx));
    }
  }
  for (const ex of assembler.unfinished()) out.push(buildEntry(ex, ctx));
  closeSync(bodies);
  return out;
}

describe('writeHarFromJournal', () => {
  it('holds one open conversation whole at a time and writes the entries held-whole writing would', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const bus = new FactBus();
    const proxy = await startProxy({ target: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, bus });
    const out = tmp.path('open-ws.har');
    const capture = await openCapture({ out, label: 'p', target: proxy.target, listen: proxy.url, bbHome: tmp.bbHome });
    bus.on(capture.listener);
    const clients: WebSocket[] = [];
    after(async () => {
      for (const ws of clients) ws.terminate();
      await proxy.close(0);
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    // Echoes every message and waits for all the echoes (multi-byte text: byte ranges are not characters).
    const converse = async (ws: WebSocket, n: number, tag: string): Promise<void> => {
      let echoed = 0;
      const all = new Promise<void>((resolve) => ws.on('message', () => ++echoed === n && resolve()));
      for (let i = 0; i < n; i++) ws.send(i % 7 === 0 ? Buffer.from([i & 255, 1, 2]) : JSON.stringify({ tag, i, s: 'été ✓' }));
      await all;
    };
    const open = async (): Promise<WebSocket> => {
      const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/ws`);
      clients.push(ws);
      await once(ws, 'open');
      return ws;
    };
    // One long conversation that ends during the capture (its records read back when it closes), small GETs among them.
    const closed = await open();
    await converse(closed, SENT, 'closed');
    closed.close(1000, 'done');
    await once(closed, 'close');
    await Promise.all(Array.from({ length: OPEN }, async (_, k) => {
      const ws = await open();
      await converse(ws, SENT, `open-${k}`);
      await (await fetch(`${proxy.url}/get/${k}`)).text();
    }));
    // The journal on disk (it flushes each loop turn), copied as it stands: a journal left with these conversations open.
    await sleep(100);
    copyFileSync(`${out}.journal`, tmp.path('copy.har.journal'));
    copyFileSync(`${out}.bodies`, tmp.path('copy.har.bodies'));

    const copy = tmp.path('copy.har');
    const result = await writeHarFromJournal({
      journalPath: `${copy}.journal`, bodiesPath: `${copy}.bodies`, out: copy, complete: false,
      redactorFor: (h) => redactorFor(h, tmp.bbHome),
    });
    const text = readFileSync(copy, 'utf8');
    const har = JSON.parse(text) as Har;
    const conversation = 2 * SENT;
    assert.equal(result.open, OPEN);
    // The open ones have every message; the closed one its close rows too.
    assert.deepEqual(har.log.entries.filter((e) => e._webSocketMessages).map((e) => e._webSocketMessages!.length), [conversation + 2, ...Array(OPEN).fill(conversation)]);
    // Held whole, the open conversations were OPEN × 600 records at the end; now one whole and the others' first WS_HELD.
    assert.ok(result.heldAtMost >= conversation, `held at most ${result.heldAtMost}`);
    assert.ok(result.heldAtMost <= conversation + OPEN * WS_HELD, `held at most ${result.heldAtMost}, more than one conversation and the windows`);
    // Byte for byte: the entries' text is the text of the entries built with every record held.
    const written = text.slice(text.indexOf('"entries":[\n') + '"entries":[\n'.length, text.indexOf('\n],"pages":'));
    assert.equal(written, entriesHeldWhole(`${copy}.journal`, `${copy}.bodies`).map((e) => JSON.stringify(e)).join(',\n'));

    // Closing the capture writes the same entries (through the same writer).
    await capture.close();
    assert.deepEqual((JSON.parse(readFileSync(out, 'utf8')) as Har).log.entries, har.log.entries);
  });
});

describe('writeHarFromJournal on a file that is not a journal', () => {
  const attempt = async (name: string, text: string): Promise<string> => {
    const journalPath = tmp.path(`${name}.journal`);
    writeFileSync(journalPath, text);
    const err = await writeHarFromJournal({ journalPath, bodiesPath: tmp.path(`${name}.bodies`), out: tmp.path(`${name}.har`), complete: false, redactorFor: () => undefined }).then(
      () => assert.fail('written'),
      (e: Error) => e,
    );
    return err.message;
  };

  it('says an empty file is empty, and one that holds other text is not a journal (not that it is empty)', async () => {
    assert.match(await attempt('empty', ''), /empty\.journal is empty \(no header record\): it is not a journal/);
    assert.match(await attempt('garbage', 'garbage\nmore garbage\n'), /garbage\.journal does not start with a bb journal header: it is not a journal/);
  });
});

// A conversation whose messages together are longer than one string may be
// (Node's limit: 0x1fffffe8 characters). Writing its entry as one
// JSON.stringify failed ("Invalid string length") and no HAR was written at
// all; `bb recover` failed the same way. 1,500 text messages of 64 KiB of
// U+0001 (valid UTF-8, each character escaped as six in JSON): 96 MiB on the
// wire, 590M characters of HAR.
describe('writeHarFromJournal, a conversation longer than a string', () => {
  it('writes the entry a message at a time: the HAR is whole, every message in it', async () => {
    const MESSAGES = 1500;
    const payload = '\u0001'.repeat(65536);
    const server = http.createServer((_req, res) => res.end('ok'));
    const wss = new WebSocketServer({ server, perMessageDeflate: false });
    wss.on('connection', (ws) => {
      let i = 0;
      const pump = (): void => {
        while (i < MESSAGES) {
          ws.send(payload);
          i++;
          if (ws.bufferedAmount > 4 << 20) return void setTimeout(pump, 2);
        }
        ws.close(1000, 'done');
      };
      pump();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const bus = new FactBus();
    const proxy = await startProxy({ target: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, bus });
    const out = tmp.path('long-ws.har');
    // The largest budget a capture takes (128 MiB a direction): all 96 MiB are recorded.
    const capture = await openCapture({ out, label: 'p', target: proxy.target, listen: proxy.url, bbHome: tmp.bbHome, wsBudget: 128 * 1048576 });
    bus.on(capture.listener);
    after(async () => {
      await proxy.close(0);
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/ws`, { perMessageDeflate: false });
    let received = 0;
    ws.on('message', () => received++);
    await once(ws, 'close');
    assert.equal(received, MESSAGES);
    await sleep(100);
    await capture.close();

    // Too long to parse as one string: read as bytes. Its end is the log's end, and every message is in it.
    const size = statSync(out).size;
    assert.ok(size > 0x1fffffe8, `the HAR is ${size} bytes: longer than a string, so the test reaches the limit`);
    const fd = openSync(out, 'r');
    try {
      const at = (pos: number, n: number): string => {
        const b = Buffer.alloc(n);
        return b.subarray(0, readSync(fd, b, 0, n, pos)).toString('utf8');
      };
      const tail = at(size - 4096, 4096);
      const log = JSON.parse(`{${tail.slice(tail.lastIndexOf('],"pages":') + 2)}`.slice(0, -2)) as { _bb: { counts: { webSocketMessages: number } } };
      assert.equal(log._bb.counts.webSocketMessages, MESSAGES + 2, 'the messages and both closes');
      const head = at(0, 65536);
      assert.match(head, /"_webSocketMessages":\[\{"type":"receive","time":[\d.]+,"opcode":1,"data":"(\\u0001)+/);
      // Each message's opening, counted over the whole file a megabyte at a time (the payload holds no quote).
      let messages = 0;
      let carry = '';
      for (let pos = 0; pos < size; pos += 1 << 20) {
        const text = carry + at(pos, 1 << 20);
        messages += text.split('{"type":"receive"').length - 1;
        // A marker cut at the boundary has at most 16 of its 17 characters before it; a whole one is not carried.
        carry = text.slice(-16);
      }
      assert.equal(messages, MESSAGES + 1, 'every message the server sent, and its close');
    } finally {
      closeSync(fd);
    }
    // Readers parse an entry as one string: past their limit they say so in one line (they read 3 GB first and
    // then called the entry invalid JSON).
    const cap = await indexCapture(out);
    try {
      await assert.rejects(cap.readEntry(0), (err: Error) => {
        assert.match(err.message, /long-ws\.har: log\.entries\[0\] is \d+ MB, past what bb parses as one entry \(480 MB: a WebSocket conversation of that much message data\): bb cannot read it; remove that entry from the file to read the rest\.$/);
        return true;
      });
    } finally {
      await cap.close();
    }
  });
});

describe('writeHarFromJournal and the secrets a journal names by value', () => {
  const sid = 'Zk3v9QpL2mXw8RtY6nBc4HdJ0aFs7GeU';
  /** A journal where a cookie is set, then reused in a JSON body (and under its own name in another), copied aside. */
  async function journal(name: string): Promise<{ journalPath: string; bodiesPath: string }> {
    const out = tmp.path(`${name}.har`);
    const cap = await openCapture({ out, label: 'l', target: 'http://127.0.0.1:1', listen: 'http://127.0.0.1:2', bbHome: tmp.bbHome });
    const bus = new FactBus();
    bus.on(cap.listener);
    for (const f of exchange({ target: '/login', status: 200, resHeaders: ['Set-Cookie', `sid=${sid}; Path=/`] })) bus.emit(f);
    const body = JSON.stringify({ session: sid, password: 'hunter2!x' });
    for (const f of exchange({ at: 5, method: 'POST', target: '/j', reqHeaders: ['Host', 'x', 'Content-Type', 'application/json'], reqBody: [Buffer.from(body)], status: 200 })) bus.emit(f);
    bus.emit({ type: 'flush' });
    const copy = { journalPath: tmp.path(`${name}-copy.journal`), bodiesPath: tmp.path(`${name}-copy.bodies`) };
    copyFileSync(`${out}.journal`, copy.journalPath);
    copyFileSync(`${out}.bodies`, copy.bodiesPath);
    cap.discard();
    return copy;
  }
  const write = async (files: { journalPath: string; bodiesPath: string }, out: string): Promise<Har> => {
    await writeHarFromJournal({ ...files, out: tmp.path(out), complete: false, redactorFor: (h) => redactorFor(h, tmp.bbHome) });
    return JSON.parse(readFileSync(tmp.path(out), 'utf8')) as Har;
  };

  it("hides a value its `sec` record names in the bodies of entries that end after it", async () => {
    const files = await journal('sec');
    assert.match(readFileSync(files.journalPath, 'utf8'), /\{"r":"sec","p":"<redacted:[0-9a-f]{8}>","n":32\}/);
    const har = await write(files, 'sec.har');
    const p = /sid=(<redacted:[0-9a-f]{8}>)/.exec(har.log.entries[0]!.response.headers[0]!.value)![1]!;
    const text = JSON.parse(har.log.entries[1]!.request.postData!.text!) as { session: string; password: string };
    assert.equal(text.session, p);
    assert.match(text.password, /^<redacted:[0-9a-f]{8}>$/);
  });

  it('reads a format-4 journal, which has no `sec` records, as before: values hidden by their names only', async () => {
    const files = await journal('v4');
    const lines = readFileSync(files.journalPath, 'utf8').split('\n').filter((l) => !l.startsWith('{"r":"sec"'));
    lines[0] = JSON.stringify({ ...(JSON.parse(lines[0]!) as HeaderRecord), v: 4 });
    writeFileSync(files.journalPath, lines.join('\n'));
    const har = await write(files, 'v4.har');
    assert.equal(har.log.entries.length, 2);
    const text = JSON.parse(har.log.entries[1]!.request.postData!.text!) as { session: string; password: string };
    assert.equal(text.session, sid, 'no record named it: kept as before');
    assert.match(text.password, /^<redacted:[0-9a-f]{8}>$/);
  });
});
