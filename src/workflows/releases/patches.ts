/**
 * Workflow changes since the first release, each behind `patched(id)` so that trajectories started by an
 * earlier release replay exactly as they ran and finish after a deploy (README, "Deploying a new release").
 * Never rename or remove an id while a release without it may still have trajectories running or queued: what
 * each keeps alive, and when it can go, is in the drop list (`drop-list.ts` here, docs/releases.md).
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
  /**
   * The CPU steps run as local activities on the worker that runs the workflow, and verify + feedback are one
   * environment step: a 5-turn trajectory takes 6 activity tasks instead of 17. Checked once per run, at its
   * start: a run started under release 2 finishes the release-2 way. Release 3.
   */
  LocalSteps: 'local-steps',
  /**
   * The trajectory's stored row decides how its workflow ends: persist cannot be cancelled half-way (a cancel
   * that arrives while it runs waits for it), and a failure whose record finds the trajectory already stored ends
   * the workflow as the row says: completed, or failed with the row's type and class. Release 4.
   */
  StoredOutcome: 'stored-outcome',
  /**
   * The episode runs in the environment the request names: its reset gives the first messages, its step the
   * observations, reward and `done` of each turn; an environment no CPU worker runs is called on its own task queue
   * (`ratchet-env-<name>`). Rewards are shaped from the environment's reward. Checked once per run, at its start.
   * Release 5.
   */
  Environments: 'environments',
  /**
   * Turn affinity: a turn after the first is sent to the task queue of the server that generated the one before (its
   * prefix is in that server's cache), and to the shared GPU queue when no worker there starts it within
   * `affinityFallbackSeconds`. Checked once per run, at its start. Release 5.
   */
  TurnAffinity: 'turn-affinity',
  /**
   * Every environment's code bounded and typed the same way, whatever its language: five attempts of
   * `environmentStepSeconds` each (in-process code bounded by the step activity itself), timeouts typed
   * `EnvironmentTimeout` / `EnvironmentWorkerLost`, and an environment nothing serves failing at once as
   * `UnknownEnvironment`. Checked once per run, at its start. Release 6.
   */
  BoundedEnvironments: 'bounded-environments',
  /**
   * One marker per run: the release that started it. A run with this marker has every change above on and checks
   * no other id, so it records one marker (and one `TemporalChangeVersion` upsert, which the SDK adds to each) where
   * release 6 recorded five of each: 8 of a five-turn trajectory's 54 history events. Checked first, at the run's
   * start; a later release adds its own id, checked before this one, and keeps the one-marker rule. Release 7.
   */
  ReleaseSeven: 'release-7',
} as const;
