// curl as a real client for end-to-end tests (a request through bb's proxy,
// as a user would send it).
import { execFile } from 'node:child_process';

/** Runs `curl -sS ARGS` and answers its stdout; rejects with curl's stderr when it fails. */
export function curl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => execFile('curl', ['-sS', ...args], (err, stdout, stderr) => (err ? reject(new Error(`curl: ${stderr}`)) : resolve(stdout))));
}
