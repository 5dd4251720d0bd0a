// Bodies a producer did not record: the request or response had one, the
// HAR holds none (browsers leave some out of their exports). Such a body is
// not compared (compare.ts drops it on both sides), and the entry says so.
import type { HarEntry, HarNameValue } from '../../capture/index.js';
import { pairValue } from '../../core/index.js';

function contentLength(headers: HarNameValue[]): number {
  return Number(pairValue(headers, 'content-length') ?? 0) || 0;
}

/**
 * A request body the producer did not record: the request had one
 * (bodySize or Content-Length above 0) and postData holds neither text nor
 * params (browsers leave postData out of some exports).
 */
export function requestNotRecorded(e: HarEntry): boolean {
  const post = e.request.postData;
  if (post && ((post.text !== undefined && post.text !== '') || post.params?.length)) return false;
  return e.request.bodySize > 0 || contentLength(e.request.headers) > 0;
}

/**
 * A response body the producer did not record: content.size (or a
 * Content-Length) above 0 and no text. Responses that have no body by
 * definition (to HEAD, 1xx, 204, 304: RFC 9110 §6.4.1) never count.
 */
export function responseNotRecorded(e: HarEntry): boolean {
  const c = e.response.content;
  if ((c.text !== undefined && c.text !== '') || e._eventSourceMessages?.length) return false;
  const status = e.response.status;
  if (e.request.method.toUpperCase() === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304) return false;
  return c.size > 0 || contentLength(e.response.headers) > 0;
}
