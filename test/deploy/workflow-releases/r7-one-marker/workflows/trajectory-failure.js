import { ActivityFailure, ApplicationFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { failureClassOf, FailureType } from '../trajectory/failure.js';
/**
 * Names what ended a trajectory: the type an activity or the workflow failed with, a timeout as a lost worker,
 * a cancellation as such. The message keeps every cause, outermost first.
 */
export function trajectoryFailure(error) {
    const type = failureTypeOf(error);
    return { failureType: type, failureClass: failureClassOf(type), message: describe(error) };
}
function failureTypeOf(error) {
    if (isCancellation(error))
        return FailureType.Cancelled;
    const cause = error instanceof ActivityFailure ? error.cause : error;
    if (cause instanceof ApplicationFailure && cause.type)
        return cause.type;
    // An activity that timed out on every attempt: its worker died or hung each time (or its heartbeats stopped).
    if (cause instanceof TimeoutFailure)
        return FailureType.WorkerLost;
    return FailureType.InternalError;
}
function describe(error) {
    const causes = [];
    for (let e = error; e; e = e.cause)
        causes.push(e.message ?? String(e));
    return causes.filter(Boolean).join(': ');
}
//# sourceMappingURL=trajectory-failure.js.map