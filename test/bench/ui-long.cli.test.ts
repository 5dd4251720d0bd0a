// bench/ui-long.ts through npm run bench, at small sizes (helpers/bench.ts).
import { benchRunsToItsEnd } from '../helpers/bench.js';

benchRunsToItsEnd(
  ['ui-long', '--quick', '--messages', '20000', '--conversations', '2', '--seconds', '1', '--connections', '200', '--requests', '5000'],
  /5\. the Exchanges tab opened after 5,000 GETs/,
);
