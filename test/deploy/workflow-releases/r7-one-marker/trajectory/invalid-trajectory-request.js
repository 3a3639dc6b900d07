/**
 * A trajectory request that the schema rejects. Thrown before anything is started (client, CLI) and inside
 * the workflow, which turns it into a non-retryable `InvalidRequest` failure: retrying cannot fix the input.
 */
export class InvalidTrajectoryRequest extends Error {
    problems;
    trajectoryId;
    name = 'InvalidTrajectoryRequest';
    constructor(
    /** Each broken rule as `path: message`, e.g. `timeouts.generateHeartbeatSeconds: expected number, got string`. */
    problems, 
    /** The request's trajectory id, when it has a usable one. */
    trajectoryId) {
        // An over-long id is itself one of the problems; the message shows enough of it to find the request.
        const shown = trajectoryId === undefined ? '' : ` ${trajectoryId.length > 120 ? `${trajectoryId.slice(0, 120)}…` : trajectoryId}`;
        super(`invalid trajectory request${shown}: ${problems.join('; ')}`);
        this.problems = problems;
        this.trajectoryId = trajectoryId;
    }
}
//# sourceMappingURL=invalid-trajectory-request.js.map