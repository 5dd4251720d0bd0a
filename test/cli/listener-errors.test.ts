// The line bb capture and bb shadow print at close per kind of listener error (cli/listener-errors.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { listenerErrorText } from '../../cli/listener-errors.js';

describe('listenerErrorText', () => {
  it('says one line per kind, with its share of all the errors and what may be missing', () => {
    const report = { count: 3, kinds: [{ error: new TypeError('tee bug'), times: 2 }, { error: new RangeError('third one'), times: 1 }] };
    assert.equal(
      listenerErrorText('primary', report, 'the mirrored copies and the live comparison may miss exchanges'),
      "bb: primary: a listener of the proxy's facts threw TypeError: tee bug (2 of 3 listener errors); traffic went on, the mirrored copies and the live comparison may miss exchanges\n" +
        "bb: primary: a listener of the proxy's facts threw RangeError: third one (1 of 3 listener errors); traffic went on, the mirrored copies and the live comparison may miss exchanges\n",
    );
  });
});
