// gRPC messages decoded with the `.proto` files the config lists
// (`normalize.proto`, docs/diff.md "gRPC with .proto files"), through
// protobufjs: the method comes from the call's path `/package.Service/Method`,
// a request ("send") decodes with its request type, a response ("receive") with
// its response type. Fields by name, enums by name, 64-bit integers as decimal
// strings, bytes as base64, defaults left out (only what was on the wire).
//
// protobufjs skips fields its type does not know and reads a field of the
// wrong wire type as garbage rather than failing. Both would hide a change
// (a field renumbered in the new build), so each message is first walked
// record by record against its type: a known field whose wire type does not
// fit fails the typed decode (the caller falls back to the schema-less one),
// and an unknown field is kept under its number, decoded without a schema,
// as protobuf.ts reads it.
import { isAbsolute, resolve } from 'node:path';
import type * as Protobuf from 'protobufjs';
import { BbError, lazyModule, oneLine } from '../core/index.js';
import { addField, MAX_PROTO_DEPTH, readRecord, recordValue, type ProtoRecord } from './protobuf.js';

// Loaded on first use: a diff without .proto files does not pay for the module (~35 ms, in every worker too).
const protobufjs = lazyModule<typeof Protobuf>('protobufjs', import.meta.url);

// protobufjs toObject options: names as written, only what was on the wire.
const TO_OBJECT: Protobuf.IConversionOptions = { longs: String, enums: String, bytes: String, defaults: false, json: true };

/** A method's two message types. */
interface MethodTypes {
  send: Protobuf.Type;
  receive: Protobuf.Type;
}

/** The `.proto` files of a run, parsed once; decodes the messages of the methods they define. */
export class ProtoSchema {
  private readonly methods = new Map<string, MethodTypes | null>();

  private constructor(private readonly root: Protobuf.Root) {}

  /**
   * Parses `files` (absolute, or relative to `base`) into one namespace, each
   * with its imports (relative to the importing file, as protoc reads them).
   * A file that cannot be read or parsed, or uses a type none defines, is a
   * BB_CONFIG_INVALID naming `where` and the file.
   */
  static load(files: readonly string[], where: string, base = '.'): ProtoSchema {
    const pb = protobufjs();
    const root = new pb.Root();
    files.forEach((f, i) => {
      const file = isAbsolute(f) ? f : resolve(base, f);
      try {
        root.loadSync(file, { keepCase: true });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') {
          const fix = e.path && e.path !== file
            ? `${e.path}, imported by ${file}, does not exist: fix the import (relative to the importing file) or add the file`
            : `${file} does not exist: fix the path (relative to the config file)`;
          throw new BbError('BB_CONFIG_INVALID', `${where}[${i}]: ${fix}.`);
        }
        // loadSync resolves every type once the file and its imports are read.
        if (/^no such (type|Type)/.test(e.message)) {
          throw new BbError('BB_CONFIG_INVALID', `${where}[${i}]: ${file} uses a type no file defines (${oneLine(e.message)}): import the .proto file that defines it.`);
        }
        throw new BbError('BB_CONFIG_INVALID', `${where}[${i}]: ${file} is not a .proto file protobufjs can parse (${oneLine(e.message)}): fix the file.`);
      }
    });
    return new ProtoSchema(root);
  }

  /**
   * A gRPC message decoded with its method's type: `path` is the call's URL
   * path (`/package.Service/Method`, a gateway prefix allowed). Undefined when
   * the files do not define the method, or the bytes do not fit its type.
   */
  decode(path: string, type: 'send' | 'receive', bytes: Uint8Array): Record<string, unknown> | undefined {
    const m = this.method(path);
    return m ? decodeTyped(m[type], bytes, 0) : undefined;
  }

  private method(path: string): MethodTypes | null {
    let m = this.methods.get(path);
    if (m === undefined) {
      m = null;
      const hit = /\/([^/]+)\/([^/]+)$/.exec(path);
      const service = hit ? this.root.lookup(hit[1]!) : null;
      const method = service instanceof protobufjs().Service ? service.methods[hit![2]!] : undefined;
      if (method?.resolvedRequestType && method.resolvedResponseType) m = { send: method.resolvedRequestType, receive: method.resolvedResponseType };
      this.methods.set(path, m);
    }
    return m;
  }
}

/** `bytes` as a `type`, unknown fields kept under their numbers; undefined when they do not fit. */
function decodeTyped(type: Protobuf.Type, bytes: Uint8Array, depth: number): Record<string, unknown> | undefined {
  let out: Record<string, unknown>;
  try {
    out = type.toObject(type.decode(bytes), TO_OBJECT);
  } catch {
    return undefined;
  }
  return fitsAndKeepUnknown(type, bytes, out, depth) ? out : undefined;
}

/**
 * Walks the records of `bytes` against `type`: false when a known field has
 * a wire type its declaration cannot have; unknown fields are added to
 * `out` (and to its nested messages) under their numbers.
 */
function fitsAndKeepUnknown(type: Protobuf.Type, bytes: Uint8Array, out: Record<string, unknown>, depth: number): boolean {
  const pb = protobufjs();
  const seen = new Map<number, number>(); // occurrences of each repeated message field, to find its item in `out`
  let at = 0;
  while (at < bytes.length) {
    const r = readRecord(bytes, at);
    if (!r) return false;
    at = r.next;
    const field = type.fieldsById[r.field];
    if (!field) {
      addField(out, String(r.field), recordValue(r, depth + 1));
      continue;
    }
    if (!wireFits(field, r, pb)) return false;
    // Unknown fields of nested messages: followed into singular and repeated message fields (not map values).
    if (field.resolvedType instanceof pb.Type && !field.map && depth < MAX_PROTO_DEPTH) {
      const value = out[field.name];
      const n = seen.get(r.field) ?? 0;
      seen.set(r.field, n + 1);
      const item = field.repeated ? (value as unknown[] | undefined)?.[n] : value;
      if (item && typeof item === 'object' && !fitsAndKeepUnknown(field.resolvedType, r.bytes!, item as Record<string, unknown>, depth + 1)) return false;
    }
  }
  return true;
}

/** Whether a record's wire type can carry this field (a repeated scalar may also come packed). */
function wireFits(field: Protobuf.Field, r: ProtoRecord, pb: typeof Protobuf): boolean {
  if (field.map || field.resolvedType instanceof pb.Type) return r.wire === 2;
  const basic = pb.types.basic as Record<string, number | undefined>;
  const packed = pb.types.packed as Record<string, number | undefined>;
  const scalar = field.resolvedType instanceof pb.Enum ? 0 : basic[field.type];
  if (r.wire === scalar) return true;
  return field.repeated && r.wire === 2 && (field.resolvedType instanceof pb.Enum || packed[field.type] !== undefined);
}

