/**
 * A call made while the same program run's previous call is still being answered. Refused rather than numbered in the
 * order the calls arrived: that order is the network's, so a re-run program's calls would be numbered otherwise and
 * diverge from the recorded ones.
 */
export class ConcurrentCallError extends Error {
  override readonly name = 'ConcurrentCallError';
  constructor(
    readonly trajectoryId: string,
    readonly attempt: number,
    /** The index of the call still being answered. */
    readonly inFlight: number,
  ) {
    super(
      `call ${inFlight} of this run of trajectory ${trajectoryId}'s agent program is still being answered: ` +
        'an agent program makes its model calls one at a time, so that they are numbered the same when it runs again',
    );
  }
}

interface RunCount {
  attempt: number;
  /** The index the run's next call gets. */
  next: number;
  inFlight: boolean;
}

/**
 * Counts each trajectory's calls for its current program run (the key's attempt): a re-run counts from 0 again, so its
 * calls line up with the recorded ones and are answered from the store. Held in memory by the process that serves the
 * endpoint, which is the one that runs the program: if it goes, the program run goes with it and the next one has a new
 * attempt.
 */
export class ProgramRunCalls {
  private readonly runs = new Map<string, RunCount>();

  /** The index of the run's next call, now in flight; ConcurrentCallError while another of its calls is. */
  begin(trajectoryId: string, attempt: number): number {
    let run = this.runs.get(trajectoryId);
    if (!run || run.attempt !== attempt) {
      run = { attempt, next: 0, inFlight: false };
      this.runs.set(trajectoryId, run);
    }
    if (run.inFlight) throw new ConcurrentCallError(trajectoryId, attempt, run.next);
    run.inFlight = true;
    return run.next;
  }

  /**
   * Ends the call in flight. Only an answered call moves the count on: a failed one keeps its index, so the OpenAI
   * client's retry of it (after a 500) is the same call again, answered from the store if its turn was recorded.
   */
  end(trajectoryId: string, attempt: number, answered: boolean): void {
    const run = this.runs.get(trajectoryId);
    if (!run || run.attempt !== attempt) return; // a newer run took over while this call was answered
    run.inFlight = false;
    if (answered) run.next += 1;
  }

  /** Forgets a trajectory that is closed: its program makes no more calls. */
  forget(trajectoryId: string): void {
    this.runs.delete(trajectoryId);
  }
}
