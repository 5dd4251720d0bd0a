// bench/ui.ts through npm run bench, smallest configuration (helpers/bench.ts).
import { benchRunsToItsEnd } from '../helpers/bench.js';

benchRunsToItsEnd(['ui', '--quick'], /bb --ui, one page/);
