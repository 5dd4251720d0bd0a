// A runner for the bb CLI, for the inspect tests.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/bb.js', import.meta.url));

/** What a CLI run gave. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bb args...` to the end (bounded), with a clean colour environment unless `env` says otherwise. */
export function bb(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const base = { ...process.env };
    delete base['NO_COLOR'];
    delete base['FORCE_COLOR'];
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...base, COLUMNS: '100', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
