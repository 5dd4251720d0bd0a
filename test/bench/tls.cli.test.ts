// bench/tls.ts through npm run bench, smallest configuration (helpers/bench.ts).
import { benchRunsToItsEnd } from '../helpers/bench.js';

benchRunsToItsEnd(['tls', '--quick'], /leaves minted by bb/);
