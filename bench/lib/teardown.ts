/**
 * Cleanup steps registered as resources come up, run in reverse order. Every step runs even when
 * an earlier one fails, so a crash halfway through still stops PostgreSQL and removes the temp dir.
 */
export class Teardown {
  private readonly steps: { name: string; run: () => unknown }[] = [];
  private done: Promise<void> | undefined;

  /** Registers a cleanup step; it runs before every step registered earlier. */
  add(name: string, run: () => unknown): void {
    this.steps.push({ name, run });
  }

  /** Runs the steps once (later calls return the same promise); failures are reported, not thrown. */
  run(): Promise<void> {
    this.done ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`bench: cleanup "${step.name}" failed:`, error);
        }
      }
    })();
    return this.done;
  }
}
