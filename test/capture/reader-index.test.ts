import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { indexCapture, readCapture, CaptureReadError } from '../../capture/reader.js';
import { capture } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { sharedFixture } from '../helpers/fixtures.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';


describe('indexCapture: entries by byte offsets', () => {
  const { dir, write } = tempDir();

  async function sameAsWholeRead(path: string): Promise<void> {
    const whole = await readCapture(path, { allowIncomplete: true });
    const cap = await indexCapture(path, { allowIncomplete: true });
    try {
      assert.equal(cap.entryCount, whole.log.entries.length);
      const { entries: _e, ...header } = whole.log;
      assert.deepEqual(cap.header, header);
      for (let i = cap.entryCount - 1; i >= 0; i--) assert.deepEqual(await cap.readEntry(i), whole.log.entries[i], `entry ${i}`);
      let n = 0;
      for await (const e of cap.entries()) assert.deepEqual(e, whole.log.entries[n++]);
      assert.equal(n, cap.entryCount);
    } finally {
      await cap.close();
    }
  }

  it('reads what the whole-file reader reads, with strings full of braces, quotes and escapes', async () => {
    const nasty = ['{"a":[1,2]}', '}]}]', '\\', '\\"', '"', 'log', 'entries', '\u2028', 'é😀', '\\\\"]'];
    const har = capture(nasty.map((s, i) => ({ url: `http://127.0.0.1:3001/n${i}?q=${encodeURIComponent(s)}`, body: { s, entries: [{ log: s }], nested: { entries: [s] } }, page: i % 2 ? s : undefined })));
    // Keys after the entries array, and pages after it too.
    const { pages, ...rest } = har.log;
    const moved = { log: { ...rest, comment: 'entries: [ { ] "', pages }, extra: { entries: [1] } };
    await sameAsWholeRead(await write('nasty.har', JSON.stringify(moved)));
    await sameAsWholeRead(await write('pretty.har', `\uFEFF${JSON.stringify(har, null, 2).replace(/\n/g, '\r\n')}`));
  });

  it('handles strings and escapes that span its 8 MiB read chunks', async () => {
    // A body of backslashes and quotes bigger than one chunk, next to small entries.
    const big = '\\"'.repeat(3 * 1024 * 1024) + '}]';
    const har = capture([{ url: 'http://127.0.0.1:3001/a', body: 'x' }, { url: 'http://127.0.0.1:3001/big', body: big }, { url: 'http://127.0.0.1:3001/c', body: { ok: true } }]);
    await sameAsWholeRead(await write('chunks.har', JSON.stringify(har)));
  });

  it('reads entries in file order through its read-ahead window, and out of order, the same', async () => {
    // ~1,500 entries of ~1.4 KB (past the 1 MiB window twice), one entry bigger than the window,
    // multi-byte characters that may straddle a window's end, and the file's last entry.
    const specs = Array.from({ length: 1500 }, (_, i) => ({ url: `http://127.0.0.1:3001/e${i}`, body: { i, text: `é😀${'x'.repeat(1300 + (i % 7))}` } }));
    specs.splice(700, 0, { url: 'http://127.0.0.1:3001/huge', body: { i: -1, text: 'ü'.repeat(700 * 1024) } });
    const path = await write('window.har', JSON.stringify(capture(specs)));
    const whole = await readCapture(path);
    const cap = await indexCapture(path);
    try {
      // In order, a jump back, in order again, a jump forward over the window's end, the last one twice,
      // then every entry from the last back (the diff's binding pass reads so, through a window that ends at the entry).
      const all = [...Array(cap.entryCount).keys()];
      const order = [...all, 3, 4, 5, 690, 699, 700, 701, 702, 1400, 1401, cap.entryCount - 1, cap.entryCount - 1, 0, 1, ...all.reverse()];
      for (const i of order) assert.deepEqual(await cap.readEntry(i), whole.log.entries[i], `entry ${i}`);
    } finally {
      await cap.close();
    }
  });

  it('finds the end of a string whatever run of backslashes its 8 MiB read chunk ends on', async () => {
    // Each backslash-quote of the body is three backslashes and a quote in the file: shifting
    // the body by 0..7 bytes puts the chunk boundary after one, two or three backslashes, or a quote.
    for (let pad = 0; pad < 8; pad++) {
      const body = 'a'.repeat(pad) + '\\"'.repeat((8 * 1024 * 1024) / 4 + 16) + '\\';
      const har = capture([{ url: 'http://127.0.0.1:3001/big', body }, { url: 'http://127.0.0.1:3001/after', body: { ok: pad } }]);
      await sameAsWholeRead(await write(`edge-${pad}.har`, JSON.stringify(har)));
    }
  });

  it('reads the shared producer fixtures the same way', async (t) => {
    const fixtures = sharedFixture(t);
    if (!fixtures) return;
    const files = (await readdir(fixtures)).filter((f) => f.endsWith('.har'));
    assert.ok(files.length > 0);
    for (const f of files) {
      let wholeErr: unknown;
      try {
        await readCapture(join(fixtures, f), { allowIncomplete: true });
      } catch (err) {
        wholeErr = err;
      }
      if (wholeErr) continue; // fixtures meant to be refused are the whole reader's tests
      await sameAsWholeRead(join(fixtures, f));
    }
  });

  it('refuses what readCapture refuses, with the same codes', async () => {
    const ok = capture([{ url: 'http://127.0.0.1:3001/a', body: 'x' }, { url: 'http://127.0.0.1:3001/b', body: 'y' }]);
    const text = JSON.stringify(ok);
    const cases: Array<[string, string | Buffer, string, RegExp?]> = [
      ['no-entries.har', JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' } } }), 'BB_CAPTURE_INVALID', /log\.entries/],
      ['truncated.har', text.slice(0, Math.floor(text.length * 0.6)), 'BB_CAPTURE_INVALID'],
      ['empty.har', JSON.stringify({ ...ok, log: { ...ok.log, entries: [] } }), 'BB_CAPTURE_EMPTY'],
      ['incomplete.har', JSON.stringify({ ...ok, log: { ...ok.log, _bb: { ...ok.log._bb!, complete: false } } }), 'BB_CAPTURE_INCOMPLETE'],
      ['scalar-entry.har', JSON.stringify({ ...ok, log: { ...ok.log, entries: [ok.log.entries[0], 7] } }), 'BB_CAPTURE_INVALID', /log\.entries\[1\]/],
    ];
    for (const [name, body, code, msg] of cases) {
      const p = await write(name, body);
      await assert.rejects(indexCapture(p), (err: unknown) => {
        assert.ok(err instanceof CaptureReadError, `${name}: ${String(err)}`);
        assert.equal(err.code, code, `${name}: ${err.message}`);
        assert.ok(isBbError(err), String(err));
        assert.equal(exitStatusFor(err), 2);
        if (msg) assert.match(err.message, msg);
        return true;
      });
    }
    await assert.rejects(indexCapture(join(dir, 'absent.har')), (err: unknown) => err instanceof CaptureReadError && err.code === 'BB_CAPTURE_UNREADABLE');
    // A broken entry is found when that entry is read, with its JSON path.
    const broken = text.replace('"status":200', '"status":');
    const cap = await indexCapture(await write('broken-entry.har', broken));
    await assert.rejects(cap.readEntry(0), (err: unknown) => err instanceof CaptureReadError && err.code === 'BB_CAPTURE_INVALID' && /log\.entries\[0\]/.test(err.message));
    assert.equal((await cap.readEntry(1)).request.url, 'http://127.0.0.1:3001/b');
    await cap.close();
    assert.equal(await readFile(join(dir, 'broken-entry.har'), 'utf8'), broken, 'the reader left the file as it was');
  });
});
