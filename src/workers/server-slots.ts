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
 * So a server may run more than `capacity` turns for a moment: a slot freed between two turns of a trajectory can go
 * to a new trajectory from the shared queue before the next turn comes back on the own queue (bench:affinity: up to
 * 11 at once on 8 slots; the extra requests wait in the server's own queue, vLLM's --max-num-seqs). Keeping the slot
 * for the returning turn instead held every server to its batch, but cost wall time (the worker cannot tell a
 * trajectory's last turn, so its kept slot sits idle): 3.7% faster than no affinity instead of 8-10%.
 */
export class ServerSlots {
  private running = 0;
  private sharedReserved = 0;
  private ownHeld = 0;
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

  /** The tuner of the worker on the shared task queue. */
  sharedTuner(): WorkerTuner {
    return tuner(this.supplier('shared', () => this.running + this.sharedReserved < this.capacity));
  }

  private supplier(queue: Permit['queue'], free: () => boolean): CustomSlotSupplier<ActivitySlotInfo> {
    const take = (): Permit => {
      if (queue === 'own') this.ownHeld++;
      else this.sharedReserved++;
      return { queue, used: false };
    };
    return {
      type: 'custom',
      reserveSlot: (_ctx, abortSignal) => new Promise<SlotPermit>((resolve, reject) => {
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

/** A GPU worker runs activities only; the other slot kinds are never used. */
function tuner(activities: CustomSlotSupplier<ActivitySlotInfo>): WorkerTuner {
  const unused = { type: 'fixed-size', numSlots: 1 } as const;
  return { activityTaskSlotSupplier: activities, workflowTaskSlotSupplier: unused, localActivityTaskSlotSupplier: unused, nexusTaskSlotSupplier: unused };
}
