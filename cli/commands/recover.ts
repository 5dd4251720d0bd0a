// bb recover: turns the journal a crashed capture left into a HAR (complete: false).
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { recoverCapture } from '../../capture/index.js';
import { basename } from 'node:path';
import { progressLine, writingText } from '../progress.js';

export const recoverCommand: BbCommand = {
  command: 'recover <capture>',
  describe: 'write the HAR of a capture that was killed, from its journal (marked incomplete)',
  builder: (y: Argv) =>
    y
      .positional('capture', { type: 'string', describe: 'the HAR path the capture was writing, or its .journal' })
      .option('force', { type: 'boolean', default: false, describe: 'overwrite an existing HAR at that path' })
      .option('quiet', { type: 'boolean', default: false, describe: 'no progress line while a long journal is written' }),
  run: async (argv, environment) => {
    const progress = progressLine({ stream: process.stderr, quiet: Boolean(argv.quiet), afterMs: environment.progressAfterMs });
    let result: Awaited<ReturnType<typeof recoverCapture>>;
    try {
      result = await recoverCapture(String(argv.capture), {
        force: Boolean(argv.force),
        bbHome: environment.home.path,
        onProgress: (p) => progress.update(writingText(`recovering ${basename(String(argv.capture))}`, p)),
      });
    } finally {
      progress.done();
    }
    if (result.finished) {
      process.stdout.write(`${result.out}\nthe capture had finished: its HAR is complete (${result.entries} exchange${result.entries === 1 ? '' : 's'}); removed the journal it left behind\n`);
      return 0;
    }
    const torn = result.dropped > 0 ? `, ${result.dropped} torn record${result.dropped === 1 ? '' : 's'} dropped` : '';
    const open = result.open > 0 ? `, ${result.open} still in flight` : '';
    process.stdout.write(`${result.out}\nrecovered ${result.entries} exchange${result.entries === 1 ? '' : 's'}${open}${torn} (capture marked incomplete)\n`);
    return 0;
  },
};
