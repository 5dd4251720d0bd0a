// bb demo (npm start): bb compare on the bundled demo service, old vs new.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { compareWithCli, parseTrees } from './compare.js';

// The config lives in the source tree (dist/ holds only compiled code): found from dist/cli/commands/ or cli/commands/.
const demoConfig = ['../../../scenario/compare/demo/bb.config.json', '../../scenario/compare/demo/bb.config.json']
  .map((rel) => fileURLToPath(new URL(rel, import.meta.url)))
  .find((path) => existsSync(path)) ?? 'scenario/compare/demo/bb.config.json';

export const demoCommand: BbCommand = {
  command: 'demo',
  describe: 'run bb compare on the bundled demo service (old vs new, one known difference)',
  builder: (y: Argv) =>
    y
      .option('trees', { type: 'string', default: 'old,new', describe: 'old,new | old,old | new,new' })
      .option('noise', { type: 'boolean', default: false, describe: 'run old twice and new once, the old pair as noise' })
      .option('out', { type: 'string', describe: 'run folder (default captures/demo-<time>/)' }),
  run: async (argv, environment) =>
    compareWithCli({
      config: demoConfig,
      trees: parseTrees(argv.trees),
      noise: Boolean(argv.noise),
      out: typeof argv.out === 'string' ? argv.out : { prefix: 'demo' },
    }, environment),
};
