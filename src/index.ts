/** Ratchet's library API: what a trainer imports. */
export { RolloutClient, type ConsumeOptions, type FinishedGroup, type SubmitOptions, type SubmittedGroup } from './client/rollout-client.js';
export type { Batch } from './consumption/consume.js';
export { LeaseLost, UnknownBatch, UnknownRun, type ClaimedBatch, type ClaimedTrajectory } from './store/write/batches.js';
export type { RunConfig, GroupMembership } from './admission/group-membership.js';
export type { RunStatus } from './store/read/run-status.js';
export { admissionCapacity, type StalenessBound } from './admission/staleness.js';
export { AdmissionController } from './processes/admission-controller.js';
export type { ExportedTrajectory } from './store/read/trajectory-export.js';
export type { TrajectoryRequest, TrajectoryResult } from './workflows/trajectory-state.js';
export type { Problem } from './datasets/index.js';
export type { RolloutOptions } from './trajectory/options.js';
export { DEFAULT_SAMPLING, type SamplingParameters } from './trajectory/sampling.js';
export { InvalidTrajectoryRequest, trajectoryRequestSchema, validateTrajectoryRequest } from './trajectory/request.js';
export { releaseBatch } from './store/write/batches.js';
export { arrowFileBytes, parquetBytes, writeArrowFile, writeParquetFile } from './export/arrow-trajectories.js';
export { latestPolicyVersion, publishPolicyVersion, PolicyVersionConflict, type PolicyVersion } from './store/write/policy-versions.js';
export { InvalidTrainingStep, PARITY_BOUNDS, TRAINING_METRICS, type TrainingMetric, type TrainingStep } from './training/training-step.js';
export { DatabaseUnavailable, openDatabase } from './store/database.js';
export { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy/policy-errors.js';
export { RawLogprobsServer } from './policy/raw-logprobs-server.js';
export { GroupMismatch, RunConfigMismatch } from './store/write/rollout-groups.js';
export { FailureType, failureClassOf, type FailureClass, type TrajectoryFailure } from './trajectory/failure.js';
export { redactUrl } from './secrets/redact-url.js';
export {
  EnvironmentFailure,
  type Environment,
  type EnvironmentStart,
  type EnvironmentTask,
  type JsonValue,
  type ObservationMessage,
  type StepResult,
  type TurnAction,
} from './environments/environment.js';
export { functionTool, toolSet, ToolDefinitionError, type JsonSchema, type ToolDefinition, type ToolSet } from './tokens/tool-definitions.js';
export type { CallText, ToolCallFormat, ToolCallText, ToolChatMessage, ToolResult } from './tokens/tool-call-format.js';
export {
  registeredToolCallFormats,
  registerToolCallFormat,
  toolCallFormatForTemplate,
  toolCallFormatOf,
  UnknownToolCallFormatError,
} from './tokens/tool-call-formats.js';
export { hermesToolCalls } from './tokens/hermes-tool-calls.js';
export { llama3JsonToolCalls } from './tokens/llama3-tool-calls.js';
export {
  parseToolCallTurn,
  parseTurnOutput,
  type MalformedToolCall,
  type MalformedToolCallKind,
  type ToolCall,
  type ToolCallTurn,
} from './tokens/tool-call-turn.js';
export { assistantToolCallMessage, MissingToolResultError, toolPromptIds, toolResultMessages, toolResultTokens } from './tokens/tool-messages.js';
export type { AgentProgram } from './agent/program-host.js';
export { checkProgramResult, type AgentProgramResult } from './agent/program-result.js';
export { startWorkers, type CpuWorkerPart, type RunningWorkers, type WorkersOptions } from './stack/workers.js';
