// The helper side of the benchmark's IPC protocol (see child.ts): says ready,
// then answers asks. Imports nothing but Node, so a measured process loads
// only what it measures.

/** A message between the benchmark and a helper process. */
export type ChildMessage =
  | { type: 'ready'; port: number }
  | { type: 'ask'; id: number; what: string }
  | { type: 'answer'; id: number; value: unknown; error?: string };

/** The child side: says ready, then answers asks with `answer` ('close' must end the process after answering). */
export function serveHelper(port: number, answer: (what: string) => unknown | Promise<unknown>): void {
  if (!process.send) throw new Error('this helper runs as a child of the benchmark (no IPC channel)');
  process.on('message', (msg: ChildMessage) => {
    if (msg.type !== 'ask') return;
    Promise.resolve()
      .then(() => answer(msg.what))
      .then(
        (value) => ({ type: 'answer', id: msg.id, value }) satisfies ChildMessage,
        (err: Error) => ({ type: 'answer', id: msg.id, value: null, error: err.message }) satisfies ChildMessage,
      )
      .then((reply) => {
        // After 'close' the process ends once the answer is out (--cpu-prof writes its profile at exit).
        process.send!(reply, undefined, {}, () => {
          if (msg.what === 'close') process.exit(0);
        });
      });
  });
  // The benchmark going away ends its helpers too.
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', port } satisfies ChildMessage);
}
