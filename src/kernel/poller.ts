/** A background loop of one process. */
export interface Poller {
  /** Cancels the next pass and waits for the one in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` again `intervalMs` after the previous pass ended, so that passes of one process
 * never overlap and never queue up behind a slow one, as they would on a fixed beat. `pass` is
 * told whether to stop early; its errors go to `logError` and the polling goes on.
 */
export function startPoller(
  pass: (stopping: () => boolean) => Promise<void>,
  intervalMs: number,
  logError: (error: unknown) => void,
): Poller {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      running = pass(() => stopped)
        .catch(logError)
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs).unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
