// What a Content-Type says about a body: the one set of media-type tests, so
// the capture (redaction, UTF-8), the differ (parsers) and the inspectors
// (bb show) agree on what is JSON, JSON Lines, an event stream, text, a zip
// or binary. Each takes a Content-Type value (parameters and case allowed) or
// a media type as mediaType() returns it.
import { BoundedMemo } from './memo.js';

/** The media type alone, lower-case: "application/json; charset=utf-8" → "application/json". */
export function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  // A capture holds few distinct Content-Types and every body asks several
  // of these tests, so answers are memoized (bounded: starts over when full).
  const media = memo.get(contentType);
  if (media !== undefined) return media;
  const semi = contentType.indexOf(';');
  return memo.set(contentType, (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase());
}
const memo = new BoundedMemo<string, string>(256);

const JSON = /^application\/([\w.-]+\+)?json$|^text\/json$|^application\/x-(json|amz-json-1\.[01])$/;
const JSON_LINES = /^application\/(x-)?(jsonl|ndjson|jsonlines|x-ndjson|json-seq)$/;
const TEXT = /^text\/|^application\/([\w.-]+\+)?(xml|javascript|ecmascript|x-www-form-urlencoded|graphql|yaml|x-yaml|toml)$/;
const BINARY = /^(image|audio|video|font)\/|^application\/(octet-stream|zip|gzip|x-gzip|pdf|wasm|x-protobuf|protobuf|grpc|zstd|x-tar|vnd\.)/;
const ZIP = /(^|[/+.-])zip$|^application\/x-zip-compressed$/;

/** JSON: application/json, any +json, text/json, application/x-json, AWS's application/x-amz-json-1.0 and -1.1. */
export function isJsonMedia(contentType: string | undefined): boolean {
  return JSON.test(mediaType(contentType));
}

/** JSON Lines / NDJSON / JSON text sequences. */
export function isJsonLinesMedia(contentType: string | undefined): boolean {
  return JSON_LINES.test(mediaType(contentType));
}

/** Server-sent events. */
export function isEventStreamMedia(contentType: string | undefined): boolean {
  return mediaType(contentType) === 'text/event-stream';
}

/** Text that is not JSON: text/*, XML, JavaScript, forms, GraphQL, YAML, TOML. */
export function isTextMedia(contentType: string | undefined): boolean {
  return TEXT.test(mediaType(contentType));
}

/** An HTML form body: application/x-www-form-urlencoded. */
export function isFormMedia(contentType: string | undefined): boolean {
  return mediaType(contentType) === 'application/x-www-form-urlencoded';
}

/** A zip archive (application/zip, +zip, vendor types ending in zip). */
export function isZipMedia(contentType: string | undefined): boolean {
  return ZIP.test(mediaType(contentType));
}

/** Declared binary (images, audio, archives, protobuf...), unless it is +json or +xml. */
export function isBinaryMedia(contentType: string | undefined): boolean {
  const media = mediaType(contentType);
  return BINARY.test(media) && !/\+(json|xml)$/.test(media);
}

/** Readable as text when the bytes allow: JSON, JSON Lines, event streams and text. */
export function isTextualMedia(contentType: string | undefined): boolean {
  const media = mediaType(contentType);
  return TEXT.test(media) || JSON.test(media) || JSON_LINES.test(media) || media === 'text/event-stream';
}
