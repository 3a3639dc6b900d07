/** Ratchet's library API: what a trainer imports. */
export { RolloutClient, type ConsumeOptions, type FinishedGroup, type SubmitOptions, type SubmittedGroup } from './client/rollout-client.js';
export type { Batch } from './consumption/consume.js';
export { LeaseLost, UnknownBatch, UnknownRun, type ClaimedBatch, type ClaimedTrajectory } from './consumption/batch-store.js';
export type { RunConfig, GroupMembership } from './admission/group-membership.js';
export type { RunStatus } from './admission/run-status.js';
export { admissionCapacity, type StalenessBound } from './admission/staleness.js';
export { AdmissionController } from './admission/admission-controller.js';
export type { ExportedTrajectory } from './store/trajectory-export.js';
export type { TrajectoryRequest, TrajectoryResult } from './workflows/trajectory-state.js';
export type { Problem } from './datasets/index.js';
export type { RolloutOptions } from './trajectory/options.js';
export { InvalidTrajectoryRequest, trajectoryRequestSchema, validateTrajectoryRequest } from './trajectory/request.js';
