// bench/replay.ts through npm run bench, smallest configuration (helpers/bench.ts).
import { benchRunsToItsEnd } from '../helpers/bench.js';

benchRunsToItsEnd(['replay', '--quick'], /Target: the replay ≥ 0\.5× autocannon direct/);
