import { describe, expect, it } from 'vitest';
import type { ActivitySlotInfo, CustomSlotSupplier, SlotPermit } from '@temporalio/worker';
import { ServerSlots } from '../../src/workers/server-slots.js';

type Supplier = CustomSlotSupplier<ActivitySlotInfo>;
const supplierOf = (tuner: ReturnType<ServerSlots['ownTuner']>) => (tuner as { activityTaskSlotSupplier: Supplier }).activityTaskSlotSupplier;
const reserveContext = { slotType: 'activity', taskQueue: 'q', workerIdentity: 'w', workerBuildId: '', isSticky: false } as never;

/** Takes a slot from `supplier` and starts a turn in it, as the SDK does when a task arrives. */
function startTurn(supplier: Supplier): SlotPermit | null {
  const permit = supplier.tryReserveSlot(reserveContext);
  if (permit) supplier.markSlotUsed({ permit, slotInfo: { type: 'activity', activityType: 'generate' } } as never);
  return permit;
}

function endTurn(supplier: Supplier, permit: SlotPermit): void {
  supplier.releaseSlot({ permit, slotInfo: { type: 'activity', activityType: 'generate' } } as never);
}

describe('a server keeps a slot for a returning turn only when one is coming (release 6)', () => {
  it('holds the slot against new trajectories until the turn comes back on the own queue', () => {
    const slots = new ServerSlots(2);
    const shared = supplierOf(slots.sharedTuner());
    const own = supplierOf(slots.ownTuner());
    const first = startTurn(shared)!;
    startTurn(shared);
    // The first trajectory's turn ends with another to come: the shared queue may not take its slot.
    endTurn(shared, first);
    slots.expectReturn(60_000);
    expect(slots.kept).toBe(1);
    expect(shared.tryReserveSlot(reserveContext)).toBeNull();
    // The turn comes back on the own queue and takes the kept slot.
    expect(startTurn(own)).not.toBeNull();
    expect(slots.kept).toBe(0);
  });

  it('gives the slot to new trajectories after a last turn, and after the hold when the trajectory went elsewhere', async () => {
    const slots = new ServerSlots(1);
    const shared = supplierOf(slots.sharedTuner());
    endTurn(shared, startTurn(shared)!);
    // A last turn (moreTurns false): nothing kept.
    expect(slots.kept).toBe(0);
    const next = startTurn(shared)!;
    expect(next).not.toBeNull();
    endTurn(shared, next);
    slots.expectReturn(50);
    expect(shared.tryReserveSlot(reserveContext)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(slots.kept).toBe(0);
    expect(shared.tryReserveSlot(reserveContext)).not.toBeNull();
  });
});
