import { ApplicationFailure, condition, defineSignal, setHandler } from '@temporalio/workflow';
/** Sent by the admission controller to every member of a group it admits. */
export const admittedSignal = defineSignal('admitted');
/**
 * Holds a trajectory until its group is admitted under the run's staleness bound. The signal is the fast path;
 * the periodic re-check covers a controller that died between admitting a group and telling its members.
 */
export async function awaitAdmission(joinGroup, recheckSeconds) {
    let signalled = false;
    setHandler(admittedSignal, () => {
        signalled = true;
    });
    for (;;) {
        const { status } = await joinGroup();
        if (status === 'admitted')
            return;
        if (status === 'cancelled')
            throw ApplicationFailure.nonRetryable('the group was cancelled before it was admitted', 'GroupCancelled');
        if (await condition(() => signalled, `${recheckSeconds}s`))
            return;
    }
}
