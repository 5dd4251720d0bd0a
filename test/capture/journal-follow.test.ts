// tailLines (capture/journal-follow.ts): a growing journal read line by line.
// `finish` reads what the file holds to its end and stops, without waiting
// for a poll (bb shadow's comparison worker at the end of a run: before, it
// waited three polls and stopped wherever it was).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tailLines } from '../../capture/journal-follow.js';
import { tempDir } from '../helpers/tmp.js';

const tmp = tempDir();

describe('tailLines', () => {
  it('finish: reads every whole line written so far, then stops at once ("finished"), however long the poll', async () => {
    const path = join(tmp.dir, 'j.journal');
    writeFileSync(path, 'one\ntwo\n');
    const got: string[] = [];
    const finish = new AbortController();
    const following = tailLines(path, (line) => void got.push(line), 600_000, undefined, finish.signal);
    // The first lines are read; the follower then sleeps its (long) poll.
    while (got.length < 2) await new Promise((r) => setTimeout(r, 5));
    appendFileSync(path, 'three\nfour\npartial');
    finish.abort();
    assert.equal(await following, 'finished');
    // What was appended since the last read is read too; a line without its newline is not a line.
    assert.deepEqual(got, ['one', 'two', 'three', 'four']);
  });

  it('a journal removed by its capture (stopped cleanly): the lines written before it went are read, then "capture-ended"', async () => {
    const path = join(tmp.dir, 'gone.journal');
    writeFileSync(path, 'one\n');
    const got: string[] = [];
    const following = tailLines(path, (line) => void got.push(line), 50);
    while (got.length < 1) await new Promise((r) => setTimeout(r, 5));
    // The capture's last lines, then its journal removed, both between two polls.
    appendFileSync(path, 'two\nthree\n');
    unlinkSync(path);
    assert.equal(await following, 'capture-ended');
    assert.deepEqual(got, ['one', 'two', 'three']);
  });
});
