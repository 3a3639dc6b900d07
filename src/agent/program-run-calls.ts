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
  /** The run's latest call: a request equal to it is that call made again (a client's or an activity's retry). */
  last?: { requestHash: string; call: number };
}

/** A call begun: its index, and whether it is the one that moves the run's count (not a retry joining a call). */
export interface BegunCall {
  call: number;
  owner: boolean;
}

/**
 * Counts each trajectory's calls for its current program run (the key's attempt): a re-run counts from 0 again, so its
 * calls line up with the recorded ones and are answered from the store. Held in memory by the process that serves the
 * endpoint, which is the one that runs the program (or opened the agent workflow's run): if it goes, the run's endpoint
 * goes with it and the next run has a new attempt.
 */
export class ProgramRunCalls {
  private readonly runs = new Map<string, RunCount>();

  /**
   * The index of the run's call with this request, now in flight; ConcurrentCallError while another of its calls is.
   * The same request as the run's latest call, in flight or answered, is that call again: the retry of a call whose
   * answer was lost (an agent workflow's model-call activity run again after its worker died) gets the same index, so
   * the same Update and the same turn, instead of a turn generated twice.
   */
  begin(trajectoryId: string, attempt: number, requestHash: string): BegunCall {
    let run = this.runs.get(trajectoryId);
    if (!run || run.attempt !== attempt) {
      run = { attempt, next: 0, inFlight: false };
      this.runs.set(trajectoryId, run);
    }
    const { last } = run;
    if (last?.requestHash === requestHash && (run.inFlight || last.call < run.next)) return { call: last.call, owner: false };
    if (run.inFlight) throw new ConcurrentCallError(trajectoryId, attempt, run.next);
    run.inFlight = true;
    run.last = { requestHash, call: run.next };
    return { call: run.next, owner: true };
  }

  /**
   * Ends a call. Only an answered call moves the count on: a failed one keeps its index, so the OpenAI client's retry of
   * it (after a 500) is the same call again, answered from the store if its turn was recorded.
   */
  end(trajectoryId: string, attempt: number, begun: BegunCall, answered: boolean): void {
    const run = this.runs.get(trajectoryId);
    if (!run || run.attempt !== attempt) return; // a newer run took over while this call was answered
    if (begun.owner) run.inFlight = false;
    if (answered) run.next = Math.max(run.next, begun.call + 1);
  }

  /** Forgets a trajectory that is closed: its program makes no more calls. */
  forget(trajectoryId: string): void {
    this.runs.delete(trajectoryId);
  }
}
