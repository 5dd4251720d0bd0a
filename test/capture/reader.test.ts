import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readCapture, streamCapture, CaptureReadError } from '../../capture/reader.js';
import { entry, har } from '../helpers/har.js';
import { tempDir } from '../helpers/tmp.js';
import { sharedFixture } from '../helpers/fixtures.js';
import { isBbError } from '../../core/index.js';
import { exitStatusFor } from '../../cli/exit.js';


/** The smallest entry readers take, in another producer's shape (overrides on top). */
const minimalEntry = (extra: Record<string, unknown> = {}) => entry('http://127.0.0.1:1/x', '2024-01-01T00:00:00.000Z', extra);

describe('readCapture on other producers’ exports', () => {
  it('reads every fixture but broken.har, and refuses broken.har with one line', async (t) => {
    const fixtures = sharedFixture(t);
    if (!fixtures) return;
    const names = (await readdir(fixtures)).filter((n) => n.endsWith('.har'));
    assert.ok(names.length >= 10);
    for (const name of names) {
      if (name === 'broken.har') {
        await assert.rejects(readCapture(join(fixtures, name)), (err: CaptureReadError) => {
          assert.ok(isBbError(err), String(err));
          assert.equal(exitStatusFor(err), 2);
          assert.equal(err.code, 'BB_CAPTURE_INVALID');
          assert.match(err.message, /broken\.har is not valid JSON/);
          assert.ok(!err.message.includes('\n'));
          return true;
        });
        continue;
      }
      const har = await readCapture(join(fixtures, name));
      assert.ok(har.log.entries.length > 0, name);
      for (const e of har.log.entries) {
        assert.equal(typeof e.request.method, 'string', name);
        assert.ok(Array.isArray(e.request.headers), name);
        assert.equal(typeof e.response.status, 'number', name);
        assert.equal(typeof e.response.content.mimeType, 'string', name);
      }
    }
  });

  it('tolerates a byte-order mark', async (t) => {
    const fixtures = sharedFixture(t);
    if (!fixtures) return;
    const har = await readCapture(join(fixtures, 'with-bom.har'));
    assert.equal(har.log.entries.length, 1);
  });

  it('keeps mitmproxy WebSocket messages in epoch seconds', async (t) => {
    const fixtures = sharedFixture(t);
    if (!fixtures) return;
    const har = await readCapture(join(fixtures, 'mitmproxy-websocket.har'));
    const msgs = har.log.entries.flatMap((e) => e._webSocketMessages ?? []);
    assert.equal(msgs.length, 5);
    assert.ok(msgs.every((m) => m.time > 1e9 && m.time < 1e11));
  });
});

describe('readCapture on hand-made files', () => {
  const { dir, write } = tempDir();
  async function refusal(path: string, opts = {}): Promise<CaptureReadError> {
    try {
      await readCapture(path, opts);
    } catch (err) {
      assert.ok(err instanceof CaptureReadError);
      assert.ok(!err.message.includes('\n'));
      assert.ok(err.message.includes(path));
      return err;
    }
    assert.fail('expected a refusal');
  }

  it('names the JSON path of a value of the wrong type', async () => {
    const entries = [minimalEntry(), minimalEntry(), minimalEntry(), minimalEntry()];
    (entries[3]!.response as Record<string, unknown>).status = '200';
    const err = await refusal(await write('wrong.har', har(entries)));
    assert.equal(err.code, 'BB_CAPTURE_INVALID');
    assert.match(err.message, /log\.entries\[3\]\.response\.status must be a number/);
  });

  it('names a header of the wrong shape', async () => {
    const e = minimalEntry();
    (e.request as Record<string, unknown>).headers = [{ name: 'a', value: 'b' }, { name: 3, value: 'x' }];
    const err = await refusal(await write('hdr.har', { log: { entries: [e] } }));
    assert.match(err.message, /log\.entries\[0\]\.request\.headers\[1\]\.name must be a string/);
  });

  it('fills missing optional fields and keeps unknown _ fields', async () => {
    const path = await write('sparse.har', {
      log: { entries: [{ request: { method: 'GET', url: 'http://a/b' }, response: { status: 204 }, _custom: { x: 1 } }] },
    });
    const har = await readCapture(path);
    const e = har.log.entries[0]!;
    assert.deepEqual(e.request.headers, []);
    assert.deepEqual(e.request.queryString, []);
    assert.equal(e.response.content.mimeType, '');
    assert.equal(e.response.bodySize, -1);
    assert.deepEqual(e._custom, { x: 1 });
  });

  it('refuses a file that is not a HAR', async () => {
    const err = await refusal(await write('notahar.har', { hello: 'world' }));
    assert.equal(err.code, 'BB_CAPTURE_INVALID');
    assert.match(err.message, /is not a HAR file/);
  });

  it('refuses a missing file as unreadable', async () => {
    const err = await refusal(join(dir, 'nope.har'));
    assert.equal(err.code, 'BB_CAPTURE_UNREADABLE');
    assert.match(err.message, /does not exist/);
  });

  it('says a missing HAR beside its journal is a capture not written yet (stop it, or bb recover)', async () => {
    const path = join(dir, 'running.har');
    await writeFile(`${path}.journal`, '');
    for (const read of [(p: string) => readCapture(p), (p: string) => streamCapture(p)]) {
      const err = await read(path).then(() => assert.fail('read a HAR that is not there'), (e: unknown) => e);
      assert.ok(err instanceof CaptureReadError);
      assert.equal(err.code, 'BB_CAPTURE_UNREADABLE');
      assert.equal(err.message, `${path} is not written yet (${path}.journal is there): stop the capture with Ctrl-C, or if it was killed run bb recover ${path}.`);
    }
  });

  it('refuses an incomplete capture unless allowed', async () => {
    const doc = { log: { version: '1.2', creator: { name: 'bb', version: '0.1.0' }, entries: [minimalEntry()], _bb: { complete: false } } };
    const path = await write('incomplete.har', doc);
    const err = await refusal(path);
    assert.equal(err.code, 'BB_CAPTURE_INCOMPLETE');
    assert.match(err.message, /--allow-incomplete/);
    const har = await readCapture(path, { allowIncomplete: true });
    assert.equal(har.log.entries.length, 1);
  });

  it('refuses a capture with no entries, even when incomplete is allowed', async () => {
    const path = await write('empty.har', har([]));
    const err = await refusal(path, { allowIncomplete: true });
    assert.equal(err.code, 'BB_CAPTURE_EMPTY');
    // Every reader says it (bb show and bb frames too), so the sentence names no one command's purpose.
    assert.equal(err.message, `${path} holds no entries: there is nothing to compare or show; check that traffic went through the proxy.`);
  });

  it('turns Playwright’s millisecond WebSocket times into seconds', async () => {
    const e = minimalEntry({
      _resourceType: 'websocket',
      _webSocketMessages: [
        { type: 'send', time: 1700000000123.5, opcode: 1, data: 'a' },
        { type: 'receive', time: 1700000000.25, opcode: 1, data: 'b' },
      ],
    });
    const har = await readCapture(await write('pw.har', { log: { entries: [e] } }));
    const [a, b] = har.log.entries[0]!._webSocketMessages!;
    assert.equal(a!.time, 1700000000.1235);
    assert.equal(b!.time, 1700000000.25);
  });

  it('streams the same entries with the header apart', async () => {
    const path = await write('two.har', har([minimalEntry(), minimalEntry()], { pages: [{ id: 'p', title: 'T', startedDateTime: '', pageTimings: {} }] }));
    const s = await streamCapture(path);
    assert.equal(s.entryCount, 2);
    assert.equal(s.header.pages![0]!.title, 'T');
    let n = 0;
    for await (const e of s.entries()) {
      assert.equal(e.request.method, 'GET');
      n++;
    }
    assert.equal(n, 2);
  });
});
