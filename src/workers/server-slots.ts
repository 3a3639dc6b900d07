import type { ActivitySlotInfo, CustomSlotSupplier, SlotPermit, SlotReleaseContext, WorkerTuner } from '@temporalio/worker';

interface Permit extends SlotPermit {
  queue: 'own' | 'shared';
  used: boolean;
}

/**
 * The generation slots of one inference server, shared by the GPU worker's two Temporal workers: the one on its own
 * task queue (trajectories whose previous turn ran here, their prefix in this server's cache) and the one on the
 * shared queue (first turns, and turns whose own worker did not take them in time).
 *
 * The own queue may always use up to `capacity` slots: a trajectory's next turn is never held back by new ones. The
 * shared queue gets a slot only while the server has room (turns running from both queues, plus shared slots
 * reserved for polling, below `capacity`), so a busy server stops taking new trajectories and the other servers
 * take them: that is what keeps the load balanced once turns stay where they started.
 *
 * A slot freed between two turns of a trajectory is kept for the returning turn when one is coming (release 6's
 * `moreTurns`, `expectReturn`): for at most `RETURNING_TURN_HOLD_MS`, the shared queue counts it as taken. Before
 * release 6 the worker could not tell a trajectory's last turn, so a kept slot sat idle after every episode (3.7%
 * faster than no affinity instead of 8-10%), and the slot went to a new trajectory from the shared queue instead:
 * a server then ran more than `capacity` turns for a moment (bench:affinity: up to 11 at once on 8 slots). Turns of
 * earlier releases' runs (no `moreTurns`) still work that way.
 */
export class ServerSlots {
  private running = 0;
  private sharedReserved = 0;
  private ownHeld = 0;
  /** Slots kept for turns expected back on the own queue, oldest first: each a timer that gives the slot up. */
  private readonly returning: NodeJS.Timeout[] = [];
  private readonly waiting = new Set<() => void>();

  constructor(readonly capacity: number) {}

  /** Turns generating now, from both queues. */
  get busy(): number {
    return this.running;
  }

  /** The tuner of the worker on the server's own task queue. */
  ownTuner(): WorkerTuner {
    return tuner(this.supplier('own', () => this.ownHeld < this.capacity));
  }

  /** Slots kept now for returning turns. */
  get kept(): number {
    return this.returning.length;
  }

  /** The tuner of the worker on the shared task queue. */
  sharedTuner(): WorkerTuner {
    return tuner(this.supplier('shared', () => this.running + this.sharedReserved + this.returning.length < this.capacity));
  }

  /**
   * A turn ended here with another of its trajectory to come: keep a slot for it, until a turn starts on the own queue
   * or `holdMs` pass (the trajectory ended early, or went to another server), whichever is first.
   */
  expectReturn(holdMs = RETURNING_TURN_HOLD_MS): void {
    const timer = setTimeout(() => {
      const index = this.returning.indexOf(timer);
      if (index >= 0) this.returning.splice(index, 1);
      this.wake();
    }, holdMs);
    timer.unref();
    this.returning.push(timer);
  }

  private supplier(queue: Permit['queue'], free: () => boolean): CustomSlotSupplier<ActivitySlotInfo> {
    const take = (): Permit => {
      if (queue === 'own') this.ownHeld++;
      else this.sharedReserved++;
      return { queue, used: false };
    };
    return {
      type: 'custom',
      reserveSlot: (_ctx, abortSignal) =>
        new Promise<SlotPermit>((resolve, reject) => {
          const attempt = () => {
            if (!free()) return false;
            this.waiting.delete(attempt);
            abortSignal.removeEventListener('abort', onAbort);
            resolve(take());
            return true;
          };
          const onAbort = () => {
            this.waiting.delete(attempt);
            // The SDK expects its own reason back (anything else it logs as the supplier's error).
            reject(abortSignal.reason);
          };
          if (attempt()) return;
          if (abortSignal.aborted) return onAbort();
          this.waiting.add(attempt);
          abortSignal.addEventListener('abort', onAbort, { once: true });
        }),
      tryReserveSlot: () => (free() ? take() : null),
      markSlotUsed: (ctx) => {
        const permit = ctx.permit as Permit;
        permit.used = true;
        this.running++;
        if (permit.queue === 'shared') this.sharedReserved--;
        // A turn back on the own queue takes the slot kept for the oldest returning turn.
        else if (this.returning.length > 0) clearTimeout(this.returning.shift());
      },
      releaseSlot: (ctx: SlotReleaseContext<ActivitySlotInfo>) => {
        const permit = ctx.permit as Permit;
        if (permit.used) this.running--;
        else if (permit.queue === 'shared') this.sharedReserved--;
        if (permit.queue === 'own') this.ownHeld--;
        this.wake();
      },
    };
  }

  private wake(): void {
    for (const attempt of [...this.waiting]) attempt();
  }
}

/**
 * How long a slot is kept for a returning turn: the environment's step and a workflow task between two turns take
 * milliseconds for math and up to seconds for code; longer than that, the trajectory has gone elsewhere.
 */
export const RETURNING_TURN_HOLD_MS = 5_000;

/** A GPU worker runs activities only; the other slot kinds are never used. */
function tuner(activities: CustomSlotSupplier<ActivitySlotInfo>): WorkerTuner {
  const unused = { type: 'fixed-size', numSlots: 1 } as const;
  return {
    activityTaskSlotSupplier: activities,
    workflowTaskSlotSupplier: unused,
    localActivityTaskSlotSupplier: unused,
    nexusTaskSlotSupplier: unused,
  };
}
