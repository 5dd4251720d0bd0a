// The one error type of bb. Every failure bb raises for a person to act on is
// a BbError: a code from codes.ts (stable, greppable, asserted by tests) and
// one sentence saying what is wrong and what to do. Library layers carry no
// process exit status: the CLI maps codes to statuses (cli/exit.ts).
//
// Errors cross module copies (the built dist/ beside the sources under tsx)
// and worker threads, where `instanceof` fails, so the class is branded and
// isBbError checks the brand.
import type { BbCode } from './codes.js';

const BRAND = Symbol.for('bb.BbError');

/** Options of a BbError. */
export interface BbErrorOptions {
  /** The error that led to this one. */
  cause?: unknown;
}

/** A failure a user can act on: a stable code and one sentence. */
export class BbError<C extends BbCode = BbCode> extends Error {
  /** Stable code from core/codes.ts. */
  readonly code: C;
  constructor(code: C, message: string, options: BbErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BbError';
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a BbError from any copy of bb (brand check, not `instanceof`). */
export function isBbError(err: unknown): err is BbError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** A library's message on one line, for bb's one-line errors (V8's JSON.parse and protobufjs quote source lines, newlines included). */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ');
}

/** Why a file could not be read, in words for a one-line error ("it does not exist", "it is a folder, not a file"), not an errno code. */
export function unreadableWhy(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'it does not exist';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return code ?? oneLine((err as Error).message);
}

/** Why a listener could not take its address, and what to give `flag` (--listen, --admin, --ui) instead, for a one-line error. */
export function listenFailureWhy(err: unknown, flag: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `the port is in use (pick another ${flag} port, or 0 for any)`;
  if (code === 'EADDRNOTAVAIL') return `no network interface of this machine has that address (give ${flag} 127.0.0.1 or an address of this machine)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name does not resolve (give ${flag} an address such as 127.0.0.1)`;
  if (code === 'EACCES') return `permission denied (a port below 1024 needs privileges: pick a higher ${flag} port, or 0 for any)`;
  return oneLine((err as Error).message);
}
