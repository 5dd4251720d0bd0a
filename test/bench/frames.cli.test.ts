// bench/frames.ts through npm run bench, smallest configuration (helpers/bench.ts).
import { benchRunsToItsEnd } from '../helpers/bench.js';

// Two rounds: the second writes the page over the first's.
benchRunsToItsEnd(['frames', '--quick', '--messages', '2000', '--rounds', '2'], /\| 2,000 +\|/, { browser: true });
