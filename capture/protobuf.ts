// Protobuf wire format decoded without a schema, for comparing gRPC messages
// (docs/diff.md "gRPC") and showing them (inspect/grpc-tree.ts: bb frames,
// the live view). https://protobuf.dev/programming-guides/encoding/
// A message is a run of records: a varint key (field number << 3 | wire
// type), then the value. Field numbers become keys; a field seen more than
// once becomes an array (repeated). Pure.
//
// Without a schema a length-delimited value is ambiguous: a nested message,
// a string, bytes or a packed repeated field. Printable UTF-8 text is read as
// a string first ("hi" = 68 69 also parses as field 13 = 105, which no one
// meant); then as a nested message when it parses wholly; then as UTF-8;
// else as bytes, `{ $bytes: base64 }`. Packed fields stay whatever that gives.

/** A decoded message: field number → value, or values when repeated. */
export type ProtoMessage = { [field: string]: ProtoValue | ProtoValue[] };
/** One decoded field value. */
export type ProtoValue = number | string | ProtoMessage | { $bytes: string };

/** Nesting followed at most this deep; deeper length-delimited values stay bytes. */
export const MAX_PROTO_DEPTH = 32;

/** One record of a message as it is on the wire: field number, wire type, raw value. */
export interface ProtoRecord {
  /** Field number, 1 .. 2^29-1. */
  field: number;
  /** Wire type: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
  wire: 0 | 1 | 2 | 5;
  /** The value of a varint or fixed64 record. */
  big?: bigint;
  /** The value of a fixed32 record. */
  fixed32?: number;
  /** The payload of a length-delimited record. */
  bytes?: Uint8Array;
  /** Where the next record starts. */
  next: number;
}

/** The record at `at`; undefined when there is none (a bad key, a value past the end, groups). */
export function readRecord(bytes: Uint8Array, at: number): ProtoRecord | undefined {
  const key = readVarint(bytes, at);
  if (!key) return undefined;
  at = key.next;
  const field = key.value / 8n;
  const wire = Number(key.value & 7n);
  if (field === 0n || field > 0x1fffffffn) return undefined; // field numbers are 1 .. 2^29-1
  const f = Number(field);
  if (wire === 0) {
    const v = readVarint(bytes, at);
    return v && { field: f, wire, big: v.value, next: v.next };
  }
  if (wire === 1) {
    if (at + 8 > bytes.length) return undefined;
    return { field: f, wire, big: Buffer.from(bytes.buffer, bytes.byteOffset + at, 8).readBigUInt64LE(0), next: at + 8 };
  }
  if (wire === 5) {
    if (at + 4 > bytes.length) return undefined;
    return { field: f, wire, fixed32: Buffer.from(bytes.buffer, bytes.byteOffset + at, 4).readUInt32LE(0), next: at + 4 };
  }
  if (wire === 2) {
    const len = readVarint(bytes, at);
    if (!len || len.value > BigInt(bytes.length - len.next)) return undefined;
    const end = len.next + Number(len.value);
    return { field: f, wire, bytes: bytes.subarray(len.next, end), next: end };
  }
  // 3 and 4 are groups (deprecated, never emitted by proto3); 6 and 7 do not exist.
  return undefined;
}

/** A record's value read without a schema, as the header comment says. */
export function recordValue(r: ProtoRecord, depth = 0): ProtoValue {
  if (r.wire === 5) return r.fixed32!;
  if (r.wire === 2) return lengthDelimited(r.bytes!, depth, decodeProtobuf);
  return safe(r.big!);
}

/** Adds a value under `key`; a key seen again becomes an array (repeated). */
export function addField(out: Record<string, unknown>, key: string, value: unknown): void {
  const prev = out[key];
  if (prev === undefined) out[key] = value;
  else if (Array.isArray(prev)) prev.push(value); // an array only this function made
  else out[key] = [prev, value];
}

/** Decodes a whole message; undefined when the bytes are not one (a bad key, a record past the end, groups). */
export function decodeProtobuf(bytes: Uint8Array, depth = 0): ProtoMessage | undefined {
  const out: ProtoMessage = {};
  let at = 0;
  while (at < bytes.length) {
    const r = readRecord(bytes, at);
    if (!r) return undefined;
    at = r.next;
    addField(out, String(r.field), recordValue(r, depth));
  }
  return out;
}

/** What rewriting a message's values changes: a string field's text, a varint's value (undefined: left as it is). */
export interface ProtoRewrite {
  text(s: string): string | undefined;
  varint(v: bigint): bigint | undefined;
}

/**
 * The message with its string fields and varints rewritten by `f`, each read
 * as decodeProtobuf reads it (a length-delimited value is a string, a nested
 * message or bytes by the same test, so a value is rewritten where the diff
 * sees it) and every length prefix around a changed value encoded again (the
 * field's, its enclosing messages'). Undefined when nothing changed or the
 * bytes are not a whole message. Keys, unchanged records and their order are
 * copied byte for byte.
 */
export function rewriteProtobuf(bytes: Uint8Array, f: ProtoRewrite): Uint8Array | undefined {
  const out = rewriteRecords(bytes, f, 0);
  return out === 'same' ? undefined : out;
}

// The rewritten records; 'same' when nothing changed; undefined when the bytes are not a message (as decodeProtobuf refuses them).
function rewriteRecords(bytes: Uint8Array, f: ProtoRewrite, depth: number): Uint8Array | 'same' | undefined {
  const parts: Uint8Array[] = [];
  let changed = false;
  let at = 0;
  while (at < bytes.length) {
    const r = readRecord(bytes, at);
    if (!r) return undefined;
    const keyEnd = readVarint(bytes, at)!.next;
    const value = r.wire === 0 ? rewriteVarint(r.big!, f) : r.wire === 2 ? rewriteLengthDelimited(r.bytes!, f, depth) : undefined;
    if (value === undefined) parts.push(bytes.subarray(at, r.next));
    else {
      changed = true;
      parts.push(bytes.subarray(at, keyEnd), r.wire === 2 ? encodeVarint(BigInt(value.length)) : new Uint8Array(0), value);
    }
    at = r.next;
  }
  return changed ? Buffer.concat(parts) : 'same';
}

function rewriteVarint(v: bigint, f: ProtoRewrite): Uint8Array | undefined {
  const next = f.varint(v);
  return next === undefined || next === v || next < 0n || next >= 1n << 64n ? undefined : encodeVarint(next);
}

// A length-delimited value's new payload, decided as lengthDelimited reads it; undefined when unchanged.
function rewriteLengthDelimited(bytes: Uint8Array, f: ProtoRewrite, depth: number): Uint8Array | undefined {
  const text = utf8(bytes);
  const asText = () => {
    const next = f.text(text!);
    return next === undefined || next === text ? undefined : Buffer.from(next, 'utf8');
  };
  if (text !== undefined && (text === '' || PRINTABLE.test(text))) return asText();
  if (depth < MAX_PROTO_DEPTH) {
    const nested = rewriteRecords(bytes, f, depth + 1);
    if (nested === 'same') return undefined;
    if (nested) return nested;
  }
  return text !== undefined ? asText() : undefined;
}

/** A base-128 varint's bytes (least significant group first). */
function encodeVarint(v: bigint): Uint8Array {
  const out: number[] = [];
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? low | 0x80 : low);
  } while (v > 0n);
  return Uint8Array.from(out);
}

/** One record of a message as shown to people (bb frames, the live view): its number, what it holds, the value. */
export interface ProtoField {
  /** Field number. */
  field: number;
  /** varint, fixed64, fixed32 (wire types 0, 1, 5); string, message or bytes (wire type 2, read as the header comment says). */
  type: 'varint' | 'fixed64' | 'fixed32' | 'string' | 'message' | 'bytes';
  /** A number (a decimal string past 2^53), the text, a nested message's records, or the bytes as hex. */
  value: number | string | ProtoField[];
}

const WIRE_NAMES = { 0: 'varint', 1: 'fixed64', 5: 'fixed32' } as const;

/**
 * A whole message's records in wire order, each read as decodeProtobuf reads
 * it (the same lengthDelimited; a repeated field once per occurrence);
 * undefined when decodeProtobuf refuses the bytes.
 */
export function protoFields(bytes: Uint8Array, depth = 0): ProtoField[] | undefined {
  const out: ProtoField[] = [];
  let at = 0;
  while (at < bytes.length) {
    const r = readRecord(bytes, at);
    if (!r) return undefined;
    at = r.next;
    if (r.wire !== 2) {
      out.push({ field: r.field, type: WIRE_NAMES[r.wire], value: recordValue(r, depth) as number | string });
      continue;
    }
    const value = lengthDelimited(r.bytes!, depth, protoFields);
    if (typeof value === 'string') out.push({ field: r.field, type: 'string', value });
    else if (Array.isArray(value)) out.push({ field: r.field, type: 'message', value });
    else out.push({ field: r.field, type: 'bytes', value: Buffer.from(r.bytes!).toString('hex') });
  }
  return out;
}

/** A length-delimited value, read as the header comment says; `message` reads a nested message (decodeProtobuf, protoFields). */
function lengthDelimited<M>(bytes: Uint8Array, depth: number, message: (bytes: Uint8Array, depth: number) => M | undefined): string | M | { $bytes: string } {
  const text = utf8(bytes);
  if (text !== undefined && (text === '' || PRINTABLE.test(text))) return text;
  if (depth < MAX_PROTO_DEPTH) {
    const nested = message(bytes, depth + 1);
    if (nested) return nested;
  }
  if (text !== undefined) return text;
  return { $bytes: Buffer.from(bytes).toString('base64') };
}

// Text a person wrote: no control characters but tab, newline and carriage return.
const PRINTABLE = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/u;

const decoder = new TextDecoder('utf-8', { fatal: true });

function utf8(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** A number when it is exact in a double, else its decimal string (uint64 ids). */
function safe(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/** A base-128 varint (at most 10 bytes); undefined when cut short or too long. */
function readVarint(bytes: Uint8Array, at: number): { value: bigint; next: number } | undefined {
  let value = 0n;
  for (let i = 0; i < 10; i++) {
    if (at + i >= bytes.length) return undefined;
    const b = bytes[at + i]!;
    value |= BigInt(b & 0x7f) << BigInt(7 * i);
    if ((b & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return undefined;
}
