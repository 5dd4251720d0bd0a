// Which requests bb shadow mirrors by default (docs/shadow.md "What is
// mirrored, and when"): the safe methods, and gRPC calls marked idempotent. Anything
// else writes, and a mirrored write needs data the target may change: it is
// mirrored only when opted in (--mirror all, or its route).
import { grpcMedia } from '../../capture/index.js';
import { headerValue } from '../../core/index.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request is mirrored by default: a safe method, or a gRPC call
 * marked idempotent. grpc-js sends every call as POST and marks nothing; the
 * one marking on the wire is gRPC core's (C++, Python, ...): PUT for a call
 * flagged idempotent (GET for a cacheable one is safe already). A POST call
 * is mirrored only when opted in (--mirror all, or its route).
 */
export function safe(method: string, rawHeaders: string[]): boolean {
  if (SAFE.has(method)) return true;
  const grpc = method === 'PUT' ? grpcMedia(headerValue(rawHeaders, 'content-type')) : undefined;
  return grpc !== undefined && !grpc.web;
}
