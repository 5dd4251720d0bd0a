// bench/diff.ts through npm run bench, smallest configuration (helpers/bench.ts).
import { benchRunsToItsEnd } from '../helpers/bench.js';

benchRunsToItsEnd(['diff', '--sizes', '20,1000'], /\| 1,000 +\|.*DIFF: 2 real findings/);
