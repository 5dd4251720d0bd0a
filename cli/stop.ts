// The stop of a long-running command (bb capture, bb shadow): the first
// SIGINT or SIGTERM says what bb does next and resolves `stopped`, so the
// command finishes in-flight work and writes its files; a second one exits
// at once (130). Signals are taken from the start: one that arrives while
// the command starts (a client that stops bb as soon as it prints its URL)
// still stops it gracefully once it is up, instead of killing it with
// nothing written.

/** A graceful stop: `stopped` resolves on the first signal or on stop(); release() gives the signals back. */
export interface GracefulStop {
  /** Resolves once the command should stop. */
  stopped: Promise<void>;
  /** Stops without a signal (--until, an error). */
  stop(): void;
  /** Gives the signals back unless one has arrived (the command is done). */
  release(): void;
}

/**
 * Takes SIGINT and SIGTERM; `doing` says what bb does on the first (`finishing
 * in-flight exchanges, writing captures`); `leftBehind`, asked on the second,
 * what was not written and how to get it back (the journals bb recover reads).
 */
export function gracefulStop(doing: string, leftBehind: () => string | undefined = () => undefined): GracefulStop {
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  // One listener for the command's life: removing one handler and adding
  // another between the two signals would let a second signal that libuv has
  // already queued for the removed handler be dropped.
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      // A second signal means now.
      const left = leftBehind();
      process.stderr.write(`bb: ${signal} again: stopped at once${left ? `, ${left}` : ''}\n`);
      process.exit(130);
    }
    signalled = true;
    process.stderr.write(`bb: ${signal}: ${doing}\n`);
    stop();
  };
  // Before a signal, release() hands the signals back; after one, the handler
  // stays so that a second signal still stops bb at once.
  const release = (): void => {
    if (signalled) return;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopped, stop: () => stop(), release };
}
