// ws 8 exports Receiver, PerMessageDeflate and extension as named exports at run time,
// but @types/ws does not declare them. Only what bb uses is declared here.
// A module file, so the block below augments @types/ws instead of replacing it.
import type { Writable } from 'node:stream';

declare module 'ws' {
  export class Receiver extends Writable {
    constructor(options?: {
      allowSynchronousEvents?: boolean;
      binaryType?: string;
      extensions?: Record<string, unknown>;
      isServer?: boolean;
      maxPayload?: number;
      skipUTF8Validation?: boolean;
    });
  }
  export class PerMessageDeflate {
    // ws 8.18+ takes isServer and maxPayload inside the options object.
    constructor(options?: { isServer?: boolean; maxPayload?: number } & Record<string, unknown>);
    static readonly extensionName: string;
    accept(configurations: Array<Record<string, unknown>>): Record<string, unknown>;
    cleanup(): void;
    decompress(data: Buffer, fin: boolean, callback: (err: Error | null, result?: Buffer) => void): void;
  }
  export const extension: {
    parse(header: string): Record<string, Array<Record<string, unknown>>>;
    format(extensions: Record<string, unknown>): string;
  };
}
