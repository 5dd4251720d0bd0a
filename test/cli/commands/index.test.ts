// The lazy command list must say what each command says of itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commands } from '../../../cli/commands/index.js';

test('every listed command loads, and its name and description match the module', async () => {
  for (const lazy of commands) {
    const cmd = await lazy.load();
    const spec = Array.isArray(cmd.command) ? cmd.command[0] : cmd.command;
    assert.equal(spec.split(' ')[0], lazy.name);
    assert.equal(cmd.describe, lazy.describe, `describe of ${lazy.name} drifted`);
  }
});
