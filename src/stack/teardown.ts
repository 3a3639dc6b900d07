/**
 * What a start-up has brought up, to be taken down as one: steps run in reverse order of `add`, each one even
 * if an earlier one threw, and only once however often `run` is called (a failed start and the caller's own
 * stop may both ask). A step's failure is kept in `failures`, never allowed to skip the steps after it.
 */
export class Teardown {
  private readonly steps: { name: string; step: () => unknown }[] = [];
  private ran: Promise<void> | undefined;
  readonly failures: { name: string; error: unknown }[] = [];

  /** Registers `step`, to run before every step registered earlier. */
  add(name: string, step: () => unknown): void {
    if (this.ran) throw new Error(`cannot add "${name}" to a teardown that has already run`);
    this.steps.push({ name, step });
  }

  /** Runs every step, last added first; later calls wait for the first. */
  run(): Promise<void> {
    this.ran ??= (async () => {
      for (const { name, step } of this.steps.reverse()) {
        try {
          await step();
        } catch (error) {
          this.failures.push({ name, error });
        }
      }
    })();
    return this.ran;
  }

  /** Runs `start` with this teardown; if it throws, tears down what it brought up and rethrows. */
  async guard<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (error) {
      await this.run();
      throw error;
    }
  }
}
