// The redaction key: 32 random bytes under bb's home, made once, atomically
// (capture/redact.ts uses it for its placeholders; the journal seals its
// body sidecar with a key derived from it).
import { randomBytes } from 'node:crypto';
import { makeDirsSync } from '../core/index.js';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The file under bb's home holding the redaction key. */
export const REDACT_KEY_FILE = 'redact.key';

/**
 * Reads the redaction key from `<bbHome>/redact.key`, creating it (32 random
 * bytes, hex, file 0600, folder 0700 when created) on first use.
 */
export function loadRedactKey(bbHome: string): Buffer {
  return loadRedactKeyFile(join(bbHome, REDACT_KEY_FILE), true);
}

/** Reads a redaction key file; creates it (and its folder) when `create` and it is missing. */
export function loadRedactKeyFile(path: string, create: boolean): Buffer {
  if (!existsSync(path)) {
    if (!create) throw new Error(`redaction key ${path} is missing`);
    createKeyFile(path);
  }
  const hex = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`redaction key ${path} is not 64 hex digits`);
  return Buffer.from(hex, 'hex');
}

// Written whole under a temporary name, then linked into place: link fails
// when the key exists, so of several captures starting at once on a fresh
// home one wins and the others read its key, never a half-written file.
function createKeyFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) {
    makeDirsSync(dir, 0o700);
    chmodSync(dir, 0o700);
  }
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, randomBytes(32).toString('hex') + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      // Another capture made it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}
