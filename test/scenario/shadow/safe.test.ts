// Which requests bb shadow mirrors by default: safe methods, and gRPC calls
// marked idempotent on the wire (gRPC core sends those as PUT); a gRPC call
// as grpc-js sends every one (POST), a gRPC-Web PUT and a plain PUT are not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { safe } from '../../../scenario/shadow/safe.js';

describe('safe: mirrored by default', () => {
  it('safe methods, and gRPC calls sent as PUT', () => {
    for (const m of ['GET', 'HEAD', 'OPTIONS']) assert.equal(safe(m, []), true, m);
    assert.equal(safe('PUT', [':method', 'PUT', 'content-type', 'application/grpc+proto']), true);
    assert.equal(safe('GET', ['content-type', 'application/grpc']), true);
  });
  it('not: gRPC POST calls, gRPC-Web PUT, plain PUT, DELETE', () => {
    assert.equal(safe('POST', ['content-type', 'application/grpc']), false);
    assert.equal(safe('PUT', ['content-type', 'application/grpc-web+proto']), false);
    assert.equal(safe('PUT', ['content-type', 'application/json']), false);
    assert.equal(safe('DELETE', []), false);
  });
});
