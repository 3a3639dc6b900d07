/**
 * Why a trajectory failed, in words a trainer can branch on. Every failed trajectory carries one type and the
 * class it belongs to: `infrastructure` (something around the data broke and a rerun may succeed) or `data`
 * (this request or this model output cannot succeed as it is). Pure: the workflow imports it.
 */
export const FailureType = {
  // infrastructure: around the data something broke, or somebody stopped it; says nothing about the answer
  PolicyUnavailable: 'PolicyUnavailable',
  PolicyProtocolError: 'PolicyProtocolError',
  DatabaseUnavailable: 'DatabaseUnavailable',
  WorkerLost: 'WorkerLost',
  Cancelled: 'Cancelled',
  GroupCancelled: 'GroupCancelled',
  InternalError: 'InternalError',
  SandboxFailure: 'SandboxFailure',
  /** Terminated or timed out from outside: the workflow's own failure path never ran (the controller records it). */
  WorkflowClosed: 'WorkflowClosed',
  /** The GPU worker's server would return logprobs of another distribution than the request samples from. */
  RawLogprobsServer: 'RawLogprobsServer',
  /** An environment's step failed for a reason of its own making (a bug, a service it needs is down), or kept failing. */
  EnvironmentError: 'EnvironmentError',
  /** An environment's reset or step did not answer within `environmentStepSeconds`, on every attempt it was given. */
  EnvironmentTimeout: 'EnvironmentTimeout',
  /** The environment's own worker (Python's `ratchet-env serve`) stopped answering: its heartbeats stopped on every attempt. */
  EnvironmentWorkerLost: 'EnvironmentWorkerLost',
  /**
   * A step re-run (a stalled worker's, or a local activity replayed) found its trajectory already stored as failed:
   * it does nothing. Only a stale run sees it; the trajectory's own failure was recorded first.
   */
  StaleStep: 'StaleStep',
  /** An agent program exited non-zero, was killed or ran past `agentProgramSeconds`, on every attempt it was given. */
  AgentProgramFailed: 'AgentProgramFailed',
  // data
  InvalidRequest: 'InvalidRequest',
  InvalidRolloutOptions: 'InvalidRolloutOptions',
  InvalidGroup: 'InvalidGroup',
  RunConfigMismatch: 'RunConfigMismatch',
  GroupMismatch: 'GroupMismatch',
  ContextExhausted: 'ContextExhausted',
  PolicyRejectedRequest: 'PolicyRejectedRequest',
  DatabaseRejected: 'DatabaseRejected',
  ChatTemplateError: 'ChatTemplateError',
  ContextMismatch: 'ContextMismatch',
  MalformedTrajectory: 'MalformedTrajectory',
  VerifierError: 'VerifierError',
  VerifierTimeout: 'VerifierTimeout',
  /** The environment says this task or this answer cannot be stepped as it is. */
  EnvironmentDataError: 'EnvironmentDataError',
  /** The request names an environment no CPU worker runs and no environment worker has ever served (a typo, most often). */
  UnknownEnvironment: 'UnknownEnvironment',
  /** An agent program's result is not `{answer}` or `{reward}` (or it exited 0 without one), or answered with no gold to judge. */
  AgentResultInvalid: 'AgentResultInvalid',
  /** An agent program run again made a different call at an index already answered: it is not deterministic in its calls. */
  CallDiverged: 'CallDiverged',
  /** An agent program ended without making any model call: there is no turn to train on. */
  AgentMadeNoCall: 'AgentMadeNoCall',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export type FailureClass = 'infrastructure' | 'data';

const INFRASTRUCTURE: ReadonlySet<string> = new Set<FailureType>([
  FailureType.PolicyUnavailable,
  FailureType.PolicyProtocolError,
  FailureType.DatabaseUnavailable,
  FailureType.WorkerLost,
  FailureType.Cancelled,
  FailureType.GroupCancelled,
  FailureType.InternalError,
  FailureType.SandboxFailure,
  FailureType.WorkflowClosed,
  FailureType.RawLogprobsServer,
  FailureType.EnvironmentError,
  FailureType.EnvironmentTimeout,
  FailureType.AgentProgramFailed,
  FailureType.EnvironmentWorkerLost,
  FailureType.StaleStep,
]);

/**
 * The class of a failure type. A type we do not know (a bug surfacing as `TypeError`, say) is not the data's
 * fault, so it counts as infrastructure: it must never look like a verdict on the model's answer.
 */
export function failureClassOf(type: string): FailureClass {
  if (INFRASTRUCTURE.has(type)) return 'infrastructure';
  return (Object.values(FailureType) as string[]).includes(type) ? 'data' : 'infrastructure';
}

/** What a failed trajectory reports: in the workflow failure details, the trajectories row and every export. */
export interface TrajectoryFailure {
  failureType: string;
  failureClass: FailureClass;
  message: string;
}

/**
 * Words of the release before failure types, which only sent a message: each pattern is unambiguous (it names
 * what failed), and anything else is an InternalError. The messages are the workflow's chain of causes.
 */
const LEGACY_MESSAGES: readonly [RegExp, FailureType][] = [
  [/^Activity task failed: inference server \S+ rejected the request/, FailureType.PolicyRejectedRequest],
  [/^Activity task failed: inference server \S+ unavailable/, FailureType.PolicyUnavailable],
  [/^Activity task failed: inference server \S+ broke the protocol/, FailureType.PolicyProtocolError],
  [/^Activity task failed: cannot reach Postgres/, FailureType.DatabaseUnavailable],
  [/^the prompt of .* fills the context window/, FailureType.ContextExhausted],
  [/^(Workflow|Activity|Cancellation scope) cancelled/, FailureType.Cancelled],
];

/**
 * The type and class of a failure as reported, or derived from its message when a history of an earlier
 * release reported none. A message may also start with its type (`VerifierTimeout: ...`).
 */
export function failureOf(message: string, reported: { failureType?: string; failureClass?: FailureClass } = {}): Omit<TrajectoryFailure, 'message'> {
  if (reported.failureType) {
    const failureClass =
      reported.failureClass === 'data' || reported.failureClass === 'infrastructure' ? reported.failureClass : failureClassOf(reported.failureType);
    return { failureType: reported.failureType, failureClass };
  }
  const prefix = /^([A-Za-z]+): /.exec(message)?.[1];
  const named = prefix && (Object.values(FailureType) as string[]).includes(prefix) ? prefix : undefined;
  const failureType = named ?? LEGACY_MESSAGES.find(([pattern]) => pattern.test(message))?.[1] ?? FailureType.InternalError;
  return { failureType, failureClass: failureClassOf(failureType) };
}
