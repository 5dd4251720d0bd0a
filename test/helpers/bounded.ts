// The test's own bound on a wait that the code under test must end by itself
// (its timer fires, its child exits): a hang fails the test with a sentence
// naming what never settled, long before the runner's per-test timeout, and
// without asserting how fast a busy machine ran it.

/** Settles as `promise` does; rejects naming `what` if it is still pending after `ms`. */
export async function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} had not settled after ${ms} ms (the test's own bound)`)), ms);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** 'first' when `promise` settles before `ms` pass, else 'bound' (for asserting which came first). */
export async function firstOf(promise: Promise<unknown>, ms: number): Promise<'first' | 'bound'> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'bound'>((resolve) => (timer = setTimeout(() => resolve('bound'), ms)));
  try {
    return await Promise.race([promise.then(() => 'first' as const, () => 'first' as const), bound]);
  } finally {
    clearTimeout(timer);
  }
}
