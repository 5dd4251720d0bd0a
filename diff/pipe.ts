// An ordered list of named steps, edited by name (the way jsondiffpatch's
// src/pipe.ts holds its filters): insert before or after a step, replace or
// remove one. A name that is not there throws, so an edit written against
// an old list fails loudly instead of doing nothing.

/** What a pipe holds: anything with a name. */
export interface Named {
  /** The name edits find it by. */
  name: string;
}

/** Named steps in order. */
export class Pipe<T extends Named> {
  private readonly steps: T[];

  /** `name` says what the pipe is in error messages ("bb diff stages"). */
  constructor(readonly name: string, steps: readonly T[] = []) {
    this.steps = [...steps];
  }

  /** Where the step called `stepName` is; throws when there is none. */
  indexOf(stepName: string): number {
    const i = this.steps.findIndex((s) => s.name === stepName);
    if (i < 0) throw new Error(`${this.name} have no step '${stepName}' (they are: ${this.names().join(', ')})`);
    return i;
  }

  /** The steps, in order (a copy). */
  list(): T[] {
    return [...this.steps];
  }

  /** The steps' names, in order. */
  names(): string[] {
    return this.steps.map((s) => s.name);
  }

  /** Adds steps at the end. */
  append(...steps: T[]): this {
    this.steps.push(...steps);
    return this;
  }

  /** Adds steps at the start. */
  prepend(...steps: T[]): this {
    this.steps.unshift(...steps);
    return this;
  }

  /** Inserts steps just before `stepName`. */
  before(stepName: string, ...steps: T[]): this {
    this.steps.splice(this.indexOf(stepName), 0, ...steps);
    return this;
  }

  /** Inserts steps just after `stepName`. */
  after(stepName: string, ...steps: T[]): this {
    this.steps.splice(this.indexOf(stepName) + 1, 0, ...steps);
    return this;
  }

  /** Puts steps in the place of `stepName`. */
  replace(stepName: string, ...steps: T[]): this {
    this.steps.splice(this.indexOf(stepName), 1, ...steps);
    return this;
  }

  /** Takes `stepName` out. */
  remove(stepName: string): this {
    this.steps.splice(this.indexOf(stepName), 1);
    return this;
  }
}
