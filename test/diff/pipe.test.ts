import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Pipe } from '../../diff/pipe.js';

describe('a pipe of named steps', () => {
  const step = (name: string) => ({ name });
  const pipe = () => new Pipe('test steps', [step('a'), step('b'), step('c')]);

  it('inserts before and after a step, replaces and removes one, by name', () => {
    assert.deepEqual(pipe().before('b', step('x')).names(), ['a', 'x', 'b', 'c']);
    assert.deepEqual(pipe().after('c', step('x'), step('y')).names(), ['a', 'b', 'c', 'x', 'y']);
    assert.deepEqual(pipe().replace('a', step('x')).names(), ['x', 'b', 'c']);
    assert.deepEqual(pipe().remove('b').names(), ['a', 'c']);
    assert.deepEqual(pipe().append(step('z')).prepend(step('y')).names(), ['y', 'a', 'b', 'c', 'z']);
  });

  it('throws on a name it does not hold, saying which it does', () => {
    for (const edit of [(p: Pipe<{ name: string }>) => p.before('nope', step('x')), (p: Pipe<{ name: string }>) => p.after('nope'), (p: Pipe<{ name: string }>) => p.replace('nope'), (p: Pipe<{ name: string }>) => p.remove('nope')]) {
      assert.throws(() => edit(pipe()), /test steps have no step 'nope' \(they are: a, b, c\)/);
    }
  });

  it('hands out copies: editing a list does not edit the pipe', () => {
    const p = pipe();
    p.list().pop();
    assert.deepEqual(p.names(), ['a', 'b', 'c']);
  });
});
