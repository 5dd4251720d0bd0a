// h2 rapid reset (CVE-2023-44487) through a recording bb: a raw client opens
// 20,000 streams and resets each at once (HEADERS + RST_STREAM(CANCEL)) in
// front of a real node:http2 server. Every stream bb read stays accounted
// for, but the capture does not grow by one full entry per stream: past a
// flood's first streams, the streams reset before any response are one
// summarized entry per burst (`_bb.resetBurst`: count, stream ids, codes,
// time span). 20,000 pairs suffice: before the fix they made ~20,000 entries
// and ~13 MB of HAR, far past the bounds asserted here; a longer flood only
// adds bursts (one per second of flood, or per 64 runs of stream ids: a client
// that skips ids makes each stream a run of its own, the worst case, tested below).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import { h2Client, h2Request, h2Server } from '../helpers/h2-peers.js';
import { EMPTY_SETTINGS, F, PREFACE, T, h2Frame } from '../helpers/h2-frames.js';
import { diffCaptures, renderText } from '../../diff/index.js';
import { BURST_MAX_RANGES, BURST_SPAN_MS } from '../../proxy/h2-reset-bursts.js';
import type { Har, HarEntry } from '../../capture/har.js';

const cleanups = new Cleanups();
after(() => cleanups.run());

const PAIRS = 20_000;
/**
 * Most entries the flood may leave: the streams before the flood was recognised (about 100, again each
 * time a slow second drops the rate below the threshold, as under heavy load) plus one burst per second
 * or per 64 id runs. 2 % of the pairs is still fifty times fewer entries than one per stream (203 were
 * seen at load 25, ~104 on a quiet machine).
 */
const MAX_ENTRIES = PAIRS / 50;
/** Most bytes the journal or the HAR may hold after the flood (a full entry costs ~700 bytes of HAR). */
const MAX_BYTES = 256 * 1024;

// A GET / with the static table only (RFC 7541 appendix A): :method GET, :scheme http, :path /, :authority literal.
const REQUEST_BLOCK = Buffer.concat([Buffer.from('828684', 'hex'), Buffer.from([0x01, 9]), Buffer.from('127.0.0.1', 'latin1')]);

/** Opens `pairs` streams (ids 1, 1 + step, 1 + 2·step, ...) on a raw socket, each reset with CANCEL right after its HEADERS. */
async function rapidReset(port: number, pairs: number, step = 2): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  cleanups.add(() => socket.destroy());
  let closed = false;
  socket.once('close', () => (closed = true));
  await new Promise((r) => socket.once('connect', r));
  socket.write(Buffer.concat([PREFACE, EMPTY_SETTINGS]));
  await new Promise((r) => socket.once('data', r));
  socket.write(h2Frame(T.SETTINGS, F.ACK, 0));
  for (let i = 0; i < pairs && !closed; i += 500) {
    const frames: Buffer[] = [];
    for (let k = i; k < Math.min(pairs, i + 500); k++) {
      const id = step * k + 1;
      frames.push(h2Frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, id, REQUEST_BLOCK), h2Frame(T.RST_STREAM, 0, id, '00000008'));
    }
    if (!socket.write(Buffer.concat(frames))) await new Promise((r) => socket.once('drain', r));
  }
  // node:http2 (nghttp2's reset rate limit) ends the connection with a GOAWAY part way: bb closes the client then.
  await new Promise((r) => setTimeout(r, 300));
  socket.destroy();
}

/** The stream ids an entry stands for. */
function streamsOf(e: HarEntry): number[] {
  const burst = e._bb?.resetBurst;
  if (!burst) return e._bb?.stream !== undefined ? [e._bb.stream] : [];
  const ids: number[] = [];
  for (const [first, last] of burst.streams) for (let id = first; id <= last; id += 2) ids.push(id);
  return ids;
}

/** A node:http2 server answering every stream, a recording bb in front, the flood (ids `step` apart) through it, and what bb wrote. */
async function recordFlood(step = 2): Promise<{ har: Har; path: string; journalBytes: number; harBytes: number }> {
  const server = await h2Server(cleanups, (stream) => {
    stream.on('error', () => {});
    // The flood's reset may come before node:http2 hands the stream over.
    if (stream.destroyed) return;
    stream.respond({ ':status': 200 });
    stream.end('ok');
  });
  const rec = await record(cleanups, server.url);
  await rapidReset(rec.port, PAIRS, step);
  // A well-behaved client on its own connection is answered and recorded in full meanwhile.
  const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
  const good = await h2Request(session, { ':path': '/good' });
  assert.equal(good.status, 200);
  session.close();
  await new Promise((r) => session.once('close', r));
  await new Promise((r) => setTimeout(r, 200));
  const journalBytes = (await stat(join(rec.dir, 'cap.har.journal'))).size;
  const har = await rec.finish();
  const path = join(rec.dir, 'cap.har');
  return { har, path, journalBytes, harBytes: (await stat(path)).size };
}

describe('an h2 rapid reset flood', () => {
  it('is recorded as a bounded number of entries that account for every stream bb read', async () => {
    const { har, journalBytes, harBytes } = await recordFlood();
    const flood = har.log.entries.filter((e) => e.connection === 'c1' && e._bb?.error?.code !== 'BB_H2_GOAWAY');
    const ids = flood.flatMap(streamsOf).sort((a, b) => a - b);
    const streams = ids.length;
    assert.ok(streams >= 1_000, `bb read at least the streams the server took before its GOAWAY (read ${streams})`);
    // Every stream once: 1, 3, 5, ... with none missing and none twice.
    const misplaced = ids.findIndex((id, i) => id !== 2 * i + 1);
    assert.equal(misplaced, -1, `every stream bb read is accounted for exactly once (stream ${2 * misplaced + 1} is not)`);
    const bursts = flood.filter((e) => e._bb?.resetBurst);
    const total = flood.reduce((sum, e) => sum + (e._bb?.resetBurst?.count ?? 1), 0);
    assert.equal(total, streams, 'the counts add up to the streams');
    assert.ok(har.log.entries.length <= MAX_ENTRIES, `at most ${MAX_ENTRIES} entries (got ${har.log.entries.length} for ${streams} streams)`);
    assert.ok(bursts.length >= 1, 'the flood is summarized');
    for (const e of bursts) {
      const b = e._bb!.resetBurst!;
      assert.equal(b.streams.reduce((n, [first, last]) => n + (last - first) / 2 + 1, 0), b.count);
      assert.deepEqual(b.resets, [{ by: 'client', code: 'CANCEL', count: b.count }]);
      assert.equal(e._bb!.aborted, 'client');
      assert.equal(e._bb!.reset, 'CANCEL');
      assert.equal(e.request.method, 'GET');
      assert.equal(e.request.httpVersion, 'HTTP/2.0');
      assert.equal(e.response.status, 0);
      assert.ok(Date.parse(b.endedDateTime) >= Date.parse(e.startedDateTime), 'the span runs forward');
      assert.match(e.comment ?? '', /stands for \d+ HTTP\/2 streams reset before a response/);
    }
    assert.ok(journalBytes < MAX_BYTES, `journal ${journalBytes} bytes < ${MAX_BYTES}`);
    assert.ok(harBytes < MAX_BYTES, `HAR ${harBytes} bytes < ${MAX_BYTES}`);
    assert.equal(har.log._bb!.counts.entries, har.log.entries.length);
    const goodEntry = har.log.entries.find((e) => e.request.url.endsWith('/good'));
    assert.equal(goodEntry?.response.status, 200, 'the good client is recorded in full');
  });

  it('two floods with different burst counts diff as a handful of findings, not one per stream', async () => {
    const a = await recordFlood();
    const b = await recordFlood();
    const result = await diffCaptures(a.path, b.path);
    const counts = (h: Har) => h.log.entries.flatMap((e) => (e._bb?.resetBurst ? [e._bb.resetBurst.count] : []));
    assert.ok(result.findings.length <= 5, `${result.findings.length} findings for bursts ${counts(a.har)} and ${counts(b.har)}:\n${renderText(result, { color: false })}`);
  });
});

describe('an h2 rapid reset flood that skips stream ids (1, 5, 9, ...: legal, ids need only increase)', () => {
  it('stays within the documented bound: one burst entry per 64 id runs at most, a few dozen HAR bytes per stream', async (t) => {
    const { har, journalBytes, harBytes } = await recordFlood(4);
    const flood = har.log.entries.filter((e) => e.connection === 'c1' && e._bb?.error?.code !== 'BB_H2_GOAWAY');
    const ids = flood.flatMap(streamsOf).sort((a, b) => a - b);
    const misplaced = ids.findIndex((id, i) => id !== 4 * i + 1);
    assert.equal(misplaced, -1, `every stream bb read is accounted for exactly once (stream ${4 * misplaced + 1} is not)`);
    const bursts = flood.filter((e) => e._bb?.resetBurst);
    t.diagnostic(`${ids.length} streams: ${flood.length} entries (${bursts.length} bursts), HAR ${harBytes} bytes, journal ${journalBytes} bytes`);
    assert.ok(ids.length >= 1_000, `bb read at least the streams the server took before its GOAWAY (read ${ids.length})`);
    assert.ok(bursts.length >= 1, 'the flood is summarized');
    // Each stream is a run of ids of its own, so a burst ends at BURST_MAX_RANGES runs (or its 1 s span)
    // rather than once a second: the documented worst case is one burst entry per 64 streams.
    const first = Date.parse(flood[0]!.startedDateTime);
    const last = Math.max(...bursts.map((e) => Date.parse(e._bb!.resetBurst!.endedDateTime)));
    const spans = Math.ceil((last - first) / BURST_SPAN_MS) + 1;
    assert.ok(bursts.length <= Math.ceil(ids.length / BURST_MAX_RANGES) + spans, `${bursts.length} bursts for ${ids.length} streams over ${spans} s`);
    for (const e of bursts) assert.ok(e._bb!.resetBurst!.streams.length <= BURST_MAX_RANGES);
    assert.ok(flood.length - bursts.length <= MAX_ENTRIES, `${flood.length - bursts.length} full entries`);
    // One full entry per stream costs ~700 bytes of HAR; the bursts cost ~32 (an id range and its share of one entry).
    assert.ok(harBytes <= 64 * ids.length, `HAR ${harBytes} bytes for ${ids.length} streams`);
    assert.ok(journalBytes <= 64 * ids.length, `journal ${journalBytes} bytes for ${ids.length} streams`);
  });
});
