// The command list. Each command is one thin file exporting a BbCommand; it is
// loaded only when that command runs (or for its --help), so `bb diff` does not
// pay for the proxy, the browser-free scenario runner or TLS. Add a line here to
// register a command: its name, its one-line description, and its loader.
import type { BbCommand } from '../command.js';

/** A command known by name, loaded on demand. */
interface LazyCommand {
  /** The first word on the command line. */
  name: string;
  /** One line for `bb --help` (the loaded command's own describe is used once loaded). */
  describe: string;
  /** Loads the command module. */
  load: () => Promise<BbCommand>;
}

export const commands: LazyCommand[] = [
  { name: 'capture', describe: 'record traffic through a transparent proxy in front of each --target, until Ctrl-C', load: async () => (await import('./capture.js')).captureCommand },
  { name: 'recover', describe: 'write the HAR of a capture that was killed, from its journal (marked incomplete)', load: async () => (await import('./recover.js')).recoverCommand },
  { name: 'diff', describe: 'compare two captures (HAR) after normalizing what always varies', load: async () => (await import('./diff.js')).diffCommand },
  { name: 'noise', describe: 'write what differs between two runs of one build as normalize rules / known entries to review', load: async () => (await import('./noise.js')).noiseCommand },
  { name: 'known', describe: 'known add FINDING-ID... | --all | --route GLOB --from report.json --reason "...": ratify findings (or differences) in the config, with the values they had', load: async () => (await import('./known.js')).knownCommand },
  { name: 'frames', describe: 'list the WebSocket connections, gRPC calls and SSE streams of a capture (any HAR) and their messages in order', load: async () => (await import('./frames.js')).framesCommand },
  { name: 'show', describe: "list the entries of a capture (any HAR): one line each, filters, --json; --entry '#N' --body shows one whole", load: async () => (await import('./show.js')).showCommand },
  { name: 'replay', describe: "re-drive a capture's client side against --target through a recording proxy, following the server's ids", load: async () => (await import('./replay.js')).replayCommand },
  { name: 'shadow', describe: 'answer live traffic with --primary, mirror it to --candidate (and --secondary), compare the answers as they flow', load: async () => (await import('./shadow.js')).shadowCommand },
  { name: 'compare', describe: 'boot the old and new servers, drive the scenario through recording proxies, diff the captures', load: async () => (await import('./compare.js')).compareCommand },
  { name: 'demo', describe: 'run bb compare on the bundled demo service (old vs new, one known difference)', load: async () => (await import('./demo.js')).demoCommand },
  { name: 'ca', describe: "show bb's CA certificate (made on first use) and how to trust it: path | print | export | trust-info", load: async () => (await import('./ca.js')).caCommand },
];
