import { describe, expect, it } from 'vitest';
import { DEFAULT_TRAJECTORY_TIMEOUTS, resolveTrajectoryTimeouts } from '../../src/trajectory/timeouts.js';

describe('resolveTrajectoryTimeouts', () => {
  it('defaults: 20 s heartbeat, 30 min generation, re-check from 60 s backing off to 30 min, 100 re-checks per run', () => {
    expect(resolveTrajectoryTimeouts()).toEqual({
      generateHeartbeatSeconds: 20,
      generateStartToCloseSeconds: 1800,
      admissionRecheckSeconds: 60,
      admissionRecheckMaxSeconds: 1800,
      admissionRechecksPerRun: 100,
      affinityFallbackSeconds: 2,
      environmentStepSeconds: 60,
      environmentHeartbeatSeconds: 10,
      agentProgramSeconds: 1800,
    });
    expect(resolveTrajectoryTimeouts({})).toEqual(DEFAULT_TRAJECTORY_TIMEOUTS);
  });

  it('keeps given values, treating undefined as absent', () => {
    expect(resolveTrajectoryTimeouts({ generateHeartbeatSeconds: 3, admissionRechecksPerRun: undefined })).toEqual({
      ...DEFAULT_TRAJECTORY_TIMEOUTS,
      generateHeartbeatSeconds: 3,
    });
  });

  it('raises the default cap to a first re-check interval above it, so backing off never shortens it', () => {
    expect(resolveTrajectoryTimeouts({ admissionRecheckSeconds: 3600 })).toMatchObject({
      admissionRecheckSeconds: 3600,
      admissionRecheckMaxSeconds: 3600,
    });
  });
});
