// yargs' refusals, said the way bb speaks: what is missing and the line to
// type, an unknown command or flag with the nearest real one. Pure: main.ts
// hands in the message, argv and the names it knows.
import { nearest } from '../core/index.js';

/** What each command needs when its arguments are missing, and the line to type. */
const USAGE: Readonly<Record<string, { needs: string; usage: string }>> = {
  diff: { needs: 'two captures, the old and the new', usage: 'bb diff OLD.har NEW.har' },
  noise: { needs: 'two captures of the same build', usage: 'bb noise A.har B.har -o rules.json' },
  show: { needs: 'a capture', usage: 'bb show CAPTURE.har' },
  frames: { needs: 'a capture', usage: 'bb frames CAPTURE.har' },
  recover: { needs: 'the capture to recover', usage: 'bb recover captures/capture.har' },
  replay: { needs: 'a capture to replay', usage: 'bb replay CAPTURE.har --target http://127.0.0.1:3001' },
  known: { needs: 'an action and finding ids (or --all)', usage: 'bb known add FINDING-ID... --from report.json --reason "..."' },
  ca: { needs: 'an action', usage: 'bb ca path|print|export|trust-info' },
};

/** `unknown command 'dif' — did you mean 'diff'?` (or a pointer to bb --help). */
export function unknownCommand(typed: string, commands: readonly string[]): string {
  const near = nearest(typed, commands);
  return near ? `unknown command '${typed}' — did you mean '${near}'?` : `unknown command '${typed}': bb --help lists the commands (${commands.join(', ')})`;
}

/** True when the user typed `name` as a flag (`--name`, `--name=...`, `-n`). */
function typedAsFlag(argv: readonly string[], name: string): boolean {
  return argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`) || a === `-${name}` || a === `--no-${name}`);
}

/**
 * Rewrites one yargs failure message for the command being run (`command`
 * may be undefined), given the argv and the flags that command declares.
 * Returns undefined for messages it does not know (main.ts keeps those).
 */
export function bbUsageMessage(message: string, command: string | undefined, argv: readonly string[], flags: readonly string[]): string | undefined {
  if (/^Not enough non-option arguments/.test(message) && command !== undefined) {
    const u = USAGE[command];
    return u ? `bb ${command} needs ${u.needs}: ${u.usage}` : undefined;
  }
  // A value flag typed last, with nothing after it ("bb diff a b --json").
  const valueless = /^Not enough arguments following: (.+)$/.exec(message);
  if (valueless) {
    const name = valueless[1]!.trim();
    const typed = name.length === 1 ? `-${name}` : `--${name}`;
    return `${typed} needs a value${command ? ` (see bb ${command} --help)` : ''}`;
  }
  // A flag the command requires (bb known add's --from and --reason).
  const required = /^Missing required arguments?: (.*)$/.exec(message);
  if (required && command !== undefined) {
    const flagsNeeded = required[1]!.split(',').map((n) => `--${n.trim()}`).join(' and ');
    const u = USAGE[command];
    // `known` has one action, `add`, the one whose flags are required.
    const name = command === 'known' ? 'known add' : command;
    return `bb ${name} needs ${flagsNeeded}${u ? `: ${u.usage}` : ` (see bb ${command} --help)`}`;
  }
  // A value outside a flag's or a positional's choices: `Invalid values: Argument: NAME, Given: "v", Choices: "a", "b"`.
  const invalid = /^Invalid values: Argument: ([^,]+), Given: (.*?), Choices: (.*)$/.exec(message);
  if (invalid) {
    const [name, given, choices] = [invalid[1]!.trim(), invalid[2]!, invalid[3]!];
    const words = (list: string) => [...list.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]).join(', ');
    const what = typedAsFlag(argv, name) ? `--${name}` : `bb ${command ?? ''}`.trim();
    return `${what} needs one of ${words(choices)}, got '${words(given) || given}'${command ? ` (see bb ${command} --help)` : ''}`;
  }
  const unknown = /^Unknown arguments?: (.*)$/.exec(message);
  if (unknown) {
    const names = unknown[1]!.split(', ').map((n) => n.trim()).filter(Boolean);
    const flagNames = names.filter((n) => typedAsFlag(argv, n));
    const known = flags.filter((f) => !/[A-Z]/.test(f) && f !== 'help' && f !== 'version');
    const first = flagNames[0];
    if (first !== undefined) {
      const negated = argv.includes(`--no-${first}`);
      const typed = negated ? `--no-${first}` : first.length === 1 && argv.includes(`-${first}`) ? `-${first}` : `--${first}`;
      const near = nearest(first, known);
      const suggestion = near === undefined ? undefined : negated && known.includes(`no-${near}`) ? `--no-${near}` : `--${near}`;
      return suggestion ? `unknown flag ${typed} — did you mean ${suggestion}?` : `unknown flag ${typed}: bb ${command ?? ''} --help lists the flags`.replace('  ', ' ');
    }
    // Not a flag: a word too many.
    const extra = names.find((n) => argv.includes(n));
    if (extra !== undefined && command !== undefined) {
      const u = USAGE[command];
      return `unexpected argument '${extra}'${u ? `: ${u.usage}` : ` (bb ${command} --help)`}`;
    }
  }
  return undefined;
}
