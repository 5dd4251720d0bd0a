// Hand-made zip files for the zip tests: local headers, central directory and
// end record written byte by byte, so a test can lie about sizes or break a
// signature on purpose.
import { crc32, deflateRawSync } from 'node:zlib';

/** One entry of a zip being built. */
export interface ZipSpec {
  /** Entry name (written as UTF-8 bytes unless nameBytes is given). */
  name: string;
  /** Content. */
  data: Buffer | string;
  /** 0 stored, 8 deflated (default 8). */
  method?: 0 | 8;
  /** Uncompressed size to declare instead of the real one (zip-bomb tests). */
  declaredSize?: number;
  /** Raw name bytes (e.g. CP437) instead of UTF-8 of `name`. */
  nameBytes?: Buffer;
  /** Set the UTF-8 flag (bit 11); default true unless nameBytes is given. */
  utf8Flag?: boolean;
  /** DOS mtime to write (default 0). */
  mtime?: number;
}

/** Builds a zip archive from specs. */
export function makeZip(specs: ZipSpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const s of specs) {
    const data = typeof s.data === 'string' ? Buffer.from(s.data, 'utf8') : s.data;
    const method = s.method ?? 8;
    const body = method === 8 ? deflateRawSync(data) : data;
    const name = s.nameBytes ?? Buffer.from(s.name, 'utf8');
    const flags = (s.utf8Flag ?? !s.nameBytes) ? 0x0800 : 0;
    const size = s.declaredSize ?? data.length;
    const crc = crc32(data);
    const mtime = s.mtime ?? 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(mtime & 0xffff, 10);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(mtime & 0xffff, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(specs.length, 8);
  end.writeUInt16LE(specs.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
