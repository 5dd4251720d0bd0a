// laneLabels: what tells lanes apart when they share a host and path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HarWebSocketMessage } from '../../capture/har.js';
import { ProtoSchema } from '../../capture/index.js';
import { grpcAsMessage } from '../../inspect/streams.js';
import { laneLabels, laneLabelText } from '../../inspect/lanes.js';
import { tempDir } from '../helpers/tmp.js';

const text = (data: string): HarWebSocketMessage => ({ type: 'send', time: 0, opcode: 1, data });
const conn = (url: string, ...messages: string[]) => ({ url, messages: messages.map(text) });

describe('laneLabels', () => {
  it('shows the query parameter that differs, from where the values part ways (two Socket.IO clients)', () => {
    const sid = 'Zt0aQ3xX9kLmNoPqRsTu';
    const labels = laneLabels([
      conn(`ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket&sid=${sid}A1`),
      conn(`ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket&sid=${sid}B2`),
    ]);
    assert.deepEqual(labels.map(laneLabelText), [
      '127.0.0.1:3000 /socket.io/ sid=…sTuA1',
      '127.0.0.1:3000 /socket.io/ sid=…sTuB2',
    ]);
  });

  it('shows the first message that differs when the URLs are the same', () => {
    const labels = laneLabels([
      conn('ws://h.test/live', '40', '42["join",{"room":"kitchen"}]'),
      conn('ws://h.test/live', '40', '42["join",{"room":"garden"}]'),
      conn('ws://h.test/other?x=1', 'hi'),
    ]);
    assert.deepEqual(labels.map(laneLabelText), [
      'h.test /live “…":"kitchen"}]”',
      'h.test /live “…":"garden"}]”',
      'h.test /other ?x=1',
    ]);
  });

  it('leaves the difference empty when nothing differs, and reads a URL that does not parse as written', () => {
    assert.deepEqual(laneLabels([conn('ws://h.test/a', 'x'), conn('ws://h.test/a', 'x'), conn('not a url')]), [
      { where: 'h.test /a', differs: '' }, { where: 'h.test /a', differs: '' }, { where: 'not a url', differs: '' },
    ]);
  });

  it('names a gRPC message\'s fields by the .proto files given, as the rows do', () => {
    const dir = tempDir().dir;
    writeFileSync(join(dir, 'items.proto'), 'syntax = "proto3"; package demo; message Item { string name = 1; string note = 2; } service Items { rpc Get (Item) returns (Item); }');
    const schema = ProtoSchema.load([join(dir, 'items.proto')], 'test');
    // Item { name: "x" } and { note: "x" }: one call each to the same method, told apart by which field was sent.
    const call = (tag: number) => ({
      url: 'http://127.0.0.1:50051/demo.Items/Get',
      messages: [grpcAsMessage({ type: 'send', time: 0, compressed: false, data: Buffer.from([tag, 1, 0x78]).toString('base64') })],
    });
    assert.deepEqual(laneLabels([call(0x0a), call(0x12)], schema).map((l) => l.differs), ['“{name: "x"}”', '“{note: "x"}”']);
    assert.deepEqual(laneLabels([call(0x0a), call(0x12)]).map((l) => l.differs), ['“{1: "x"}”', '“{2: "x"}”']);
  });
});
