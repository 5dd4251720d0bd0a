// A gRPC message as people read it: the protobuf decoded as the diff decodes
// it (capture/protobuf.ts without a schema, capture/proto-schema.ts with the
// config's .proto files), as a tree of fields (number or name, type, value),
// in one line for `bb frames` rows and the live frames tab, in indented lines
// for a payload panel, and as data the live capture view draws. Pure.
//
// Captured bytes are hostile: everything here is text for textContent or a
// terminal (controls escaped by the caller's escapeControls), never markup.
import { protoFields, type HarWebSocketMessage, type ProtoField, type ProtoSchema } from '../capture/index.js';

/** One field as shown: a number (no schema) or a name, what it holds, and its value or nested fields. */
export interface ShownField {
  /** The field number ("1"), or its name when a .proto file named it (a repeated item: "[0]"). */
  name: string;
  /** varint, fixed32, fixed64, string, bytes, message; with a schema: string, number, bool, message, repeated. */
  type: string;
  /** The value as text (a string as it is, bytes as hex); absent for a message or a repeated field. */
  value?: string;
  /** A message's or a repeated field's fields. */
  fields?: ShownField[];
}

/** A gRPC message decoded for showing: named by a schema or not. */
export interface ShownMessage {
  /** True when a .proto file's type named the fields. */
  schema: boolean;
  /** Its fields in order. */
  fields: ShownField[];
}

/** Where a message's schema comes from: the run's .proto files and the call's path (`/package.Service/Method`). */
export interface GrpcSchemaOf {
  /** The .proto files, loaded. */
  schema: ProtoSchema;
  /** The call's URL path. */
  path: string;
}

/** A call's schema from the run's .proto files (none: field numbers) and the call's URL (its path names the method). */
export function grpcSchemaAt(schema: ProtoSchema | undefined, url: string | undefined): GrpcSchemaOf | undefined {
  if (!schema || url === undefined) return undefined;
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // A HAR from elsewhere may hold a bare path: it is the path.
  }
  return { schema, path };
}

/** The parts of a gRPC message (HarGrpcMessage, or grpcAsMessage's row) decoding needs. */
type GrpcPayload = Pick<HarWebSocketMessage, 'data' | 'type'> & { _bb?: { truncated?: number; undecoded?: string } };

/**
 * A gRPC message decoded, as the diff decodes it: undefined when it was cut
 * short, stayed compressed, or is not protobuf (then it shows as hex).
 */
export function grpcShown(m: GrpcPayload, schemaOf?: GrpcSchemaOf): ShownMessage | undefined {
  if (m._bb?.truncated !== undefined || m._bb?.undecoded !== undefined || m.type === 'error') return undefined;
  const bytes = Buffer.from(m.data, 'base64');
  const typed = schemaOf?.schema.decode(schemaOf.path, m.type, bytes);
  if (typed) return { schema: true, fields: namedFields(typed) };
  const fields = protoFields(bytes);
  return fields ? { schema: false, fields: fields.map(wireField) } : undefined;
}

function wireField(f: ProtoField): ShownField {
  const name = String(f.field);
  return Array.isArray(f.value) ? { name, type: f.type, fields: f.value.map(wireField) } : { name, type: f.type, value: String(f.value) };
}

/** protobufjs's object (names, enums by name, 64-bit and bytes as strings) as fields. */
function namedFields(o: Record<string, unknown>): ShownField[] {
  return Object.entries(o).map(([name, v]) => namedField(name, v));
}

function namedField(name: string, v: unknown): ShownField {
  if (Array.isArray(v)) return { name, type: 'repeated', fields: v.map((item, i) => namedField(`[${i}]`, item)) };
  if (v !== null && typeof v === 'object') return { name, type: 'message', fields: namedFields(v as Record<string, unknown>) };
  return { name, type: typeof v === 'boolean' ? 'bool' : typeof v, value: String(v) };
}

/** Text and bytes keep their kind in one line: text quoted, bytes as 0x…, numbers bare. */
function inlineValue(f: ShownField): string {
  if (f.fields) return f.type === 'repeated' ? `[${f.fields.map(inlineValue).join(', ')}]` : `{${inlineFields(f.fields)}}`;
  if (f.type === 'string') return JSON.stringify(f.value);
  if (f.type === 'bytes') return f.value === '' ? '0x' : `0x${f.value}`;
  return f.value!;
}

function inlineFields(fields: ShownField[]): string {
  return fields.map((f) => `${f.name}: ${inlineValue(f)}`).join(', ');
}

/** The message in one line: `{1: "got a", 2: 10, 3: {1: 0x00ff}}`. */
export function shownInline(m: ShownMessage): string {
  return `{${inlineFields(m.fields)}}`;
}

/** The message as indented lines, one field each: `1  string  "got a"`, a message's fields under it. */
export function shownLines(m: ShownMessage): string[] {
  const lines: string[] = [];
  const walk = (fields: ShownField[], indent: string): void => {
    for (const f of fields) {
      lines.push(`${indent}${f.name}  ${f.type}${f.fields ? '' : `  ${inlineValue(f)}`}`);
      if (f.fields) walk(f.fields, indent + '  ');
    }
  };
  walk(m.fields, '');
  return lines;
}
