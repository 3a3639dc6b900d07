/**
 * Workflow changes since the first release, each behind `patched(id)` so that trajectories started by an
 * earlier release replay exactly as they ran and finish after a deploy (README, "Deploying a new release").
 * Never rename or remove an id while a release without it may still have trajectories running or queued.
 */
export const Patch = {
    /**
     * The request is checked against its schema before anything runs; an invalid one fails at once, typed.
     * Release 2.
     */
    RequestSchema: 'request-schema',
    /**
     * A queued trajectory backs off its admission re-check and continues-as-new, so its history stays bounded.
     * Checked at every re-check, so a trajectory queued under release 1 switches over once a release-2 worker runs it.
     */
    AdmissionBackoff: 'admission-backoff',
};
