// bb noise: what differs between two captures of one build, written as rules for review.
import type { Argv } from 'yargs';
import type { BbCommand } from '../command.js';
import { diffCaptures, loadDiffConfig } from '../../diff/index.js';
import { noiseRules } from '../../diff/index.js';
import { writeReport } from './diff.js';

export const noiseCommand: BbCommand = {
  command: 'noise <a> <b>',
  describe: 'write what differs between two runs of one build as normalize rules / known entries to review',
  builder: (y: Argv) =>
    y
      .positional('a', { type: 'string', describe: 'a capture of the build' })
      .positional('b', { type: 'string', describe: 'another capture of the same build' })
      .option('out', { alias: 'o', type: 'string', nargs: 1, default: '-', describe: 'where to write the rules (JSON; "-" = stdout)' })
      .option('config', { type: 'string', describe: 'rules already in use (bb.config.json): what they hide is not noise' })
      .option('allow-incomplete', { type: 'boolean', default: false, describe: 'read captures recovered after a crash' })
      .option('force', { type: 'boolean', default: false, describe: 'overwrite --out if it exists' }),
  run: async (argv) => {
    const config = typeof argv.config === 'string' ? await loadDiffConfig(argv.config) : undefined;
    const result = await diffCaptures(String(argv.a), String(argv.b), { config, allowIncomplete: Boolean(argv.allowIncomplete ?? argv['allow-incomplete']) });
    const real = result.differences.filter((d) => d.class === 'real');
    const rules = noiseRules(real);
    const out = String(argv.out);
    await writeReport(out, `${JSON.stringify(rules, null, 2)}\n`, '--out', Boolean(argv['force']));
    process.stderr.write(
      `bb noise: ${real.length} difference${real.length === 1 ? '' : 's'} between the two runs → ${rules.normalize.paths.length} normalize path rule(s) and ${rules.known.length} known entr${rules.known.length === 1 ? 'y' : 'ies'}` +
        `${out === '-' ? '' : ` in ${out}`}; review them, then merge into your config.\n`,
    );
    return 0;
  },
};
