import { describe, expect, it } from 'vitest';
import {
  InvalidTrajectoryRequest,
  MAX_REQUEST_JSON_BYTES,
  trajectoryRequestSchema,
  validateTrajectoryRequest,
  type TrajectoryRequest,
} from '../../src/trajectory/request.js';

const valid: TrajectoryRequest = { trajectoryId: 'run/gsm8k-17/3', qid: 'gsm8k-17', taskId: 17, problem: 'How many?', gold: ['27'] };
const run = { runId: 'grpo', maxHeadOffpolicyness: 2, batchSize: 4, maxConcurrent: 8 };
const grouped: TrajectoryRequest = { ...valid, trajectoryId: 'grpo/gsm8k-17/3', group: { run, groupId: 'grpo/gsm8k-17', size: 8, sample: 3 } };

/** The problems of an invalid request, after checking the error's type, name and message. */
function problemsOf(input: unknown): string[] {
  let caught: unknown;
  try {
    validateTrajectoryRequest(input);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(InvalidTrajectoryRequest);
  const error = caught as InvalidTrajectoryRequest;
  expect(error.name).toBe('InvalidTrajectoryRequest');
  expect(error.message).toContain(error.problems.join('; '));
  return error.problems;
}

describe('validateTrajectoryRequest accepts', () => {
  it('a minimal request, a full one, and a grouped one', () => {
    expect(validateTrajectoryRequest(valid)).toEqual(valid);
    const full: TrajectoryRequest = {
      ...grouped,
      options: { turns: 2, earlyStop: true, discount: 0.9, rewardScaling: 2, rewardBias: 0.1, maxNewTokens: 64, temperature: 0, layout: 'concat' },
      timeouts: {
        generateHeartbeatSeconds: 3,
        generateStartToCloseSeconds: 60,
        admissionRecheckSeconds: 0.5,
        admissionRecheckMaxSeconds: 30,
        admissionRechecksPerRun: 5,
      },
    };
    expect(validateTrajectoryRequest(full)).toEqual(full);
  });

  it('options given as undefined, as callers spread partial options', () => {
    expect(() => validateTrajectoryRequest({ ...valid, options: { turns: undefined, layout: undefined } })).not.toThrow();
  });

  it('ids with non-ASCII characters within the byte limit', () => {
    expect(() => validateTrajectoryRequest({ ...valid, trajectoryId: `r/${'é'.repeat(499)}`, qid: 'ü'.repeat(200) })).not.toThrow();
  });
});

describe('validateTrajectoryRequest rejects, naming the path', () => {
  it('a non-numeric timeout', () => {
    expect(problemsOf({ ...valid, timeouts: { generateHeartbeatSeconds: '20' } })).toEqual([
      'timeouts.generateHeartbeatSeconds: expected number, got string',
    ]);
  });

  it('a timeout Temporal could not parse as a duration, or zero', () => {
    expect(problemsOf({ ...valid, timeouts: { generateStartToCloseSeconds: 1e-7, admissionRecheckSeconds: 0 } })).toEqual([
      'timeouts.generateStartToCloseSeconds: must be a number of seconds in [0.001, 31536000], got 1e-7',
      'timeouts.admissionRecheckSeconds: must be a number of seconds in [0.001, 31536000], got 0',
    ]);
  });

  it('a fractional number of re-checks per run', () => {
    expect(problemsOf({ ...valid, timeouts: { admissionRechecksPerRun: 1.5 } })).toEqual([
      'timeouts.admissionRechecksPerRun: must be a positive integer, got 1.5',
    ]);
  });

  it('a first re-check interval above its cap', () => {
    expect(problemsOf({ ...valid, timeouts: { admissionRecheckSeconds: 60, admissionRecheckMaxSeconds: 30 } })).toEqual([
      'timeouts.admissionRecheckSeconds: must not exceed admissionRecheckMaxSeconds (60 > 30)',
    ]);
  });

  it('a non-string qid and a missing problem', () => {
    const { problem: _, ...noProblem } = valid;
    expect(problemsOf({ ...noProblem, qid: 17 })).toEqual(['qid: expected string, got number', 'problem: is required']);
  });

  it('empty ids, problem and gold', () => {
    expect(problemsOf({ ...valid, trajectoryId: '', qid: '', problem: '', gold: [] })).toEqual([
      'trajectoryId: must not be empty',
      'qid: must not be empty',
      'problem: must not be empty',
      'gold: must hold at least one gold answer',
    ]);
  });

  it('a gold answer that is not a string', () => {
    expect(problemsOf({ ...valid, gold: ['1', 2] })).toEqual(['gold[1]: expected string, got number']);
  });

  it('a taskId that is not a safe integer', () => {
    expect(problemsOf({ ...valid, taskId: 1.5 })[0]).toMatch(/^taskId: /);
    expect(problemsOf({ ...valid, taskId: 2 ** 60 })[0]).toMatch(/^taskId: /);
  });

  it('NUL in the problem or a gold answer, which Postgres text cannot store', () => {
    expect(problemsOf({ ...valid, problem: 'a\u0000b', gold: ['1', 'x\u0000'] })).toEqual([
      'problem: must not contain NUL (U+0000), which Postgres text cannot store',
      'gold[1]: must not contain NUL (U+0000), which Postgres text cannot store',
    ]);
  });

  it('control characters in the ids', () => {
    expect(problemsOf({ ...valid, trajectoryId: 'run/a\nb/0', qid: 'a\u0000b' })).toEqual([
      'trajectoryId: must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
      'qid: must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
    ]);
  });

  it('a trajectory id over 1000 UTF-8 bytes, counting bytes rather than characters', () => {
    // 600 characters, 1200 bytes: within a character limit, over Temporal's byte limit.
    expect(problemsOf({ ...valid, trajectoryId: 'é'.repeat(600) })).toEqual([
      "trajectoryId: must be at most 1000 UTF-8 bytes (Temporal's workflow id limit), got 1200",
    ]);
  });

  it('a qid over 400 UTF-8 bytes', () => {
    expect(problemsOf({ ...valid, qid: '€'.repeat(134) })[0]).toMatch(/^qid: must be at most 400 UTF-8 bytes .*got 402$/);
  });

  it('unknown keys, at the root and inside options and timeouts (typos)', () => {
    expect(problemsOf({ ...valid, timeout: {}, options: { turn: 3 }, timeouts: { heartbeatSeconds: 5 } })).toEqual([
      'options.turn: is not a known field',
      'timeouts.heartbeatSeconds: is not a known field',
      'timeout: is not a known field',
    ]);
  });

  it('rollout options outside the ranges resolveRolloutOptions enforces', () => {
    expect(problemsOf({ ...valid, options: { turns: 65, discount: 0, maxNewTokens: 0, temperature: -1, layout: 'x', earlyStop: 'yes' } })).toEqual([
      'options.turns: must be an integer in [1, 64], got 65',
      'options.earlyStop: expected boolean, got string',
      'options.discount: must be in (0, 1], got 0',
      'options.maxNewTokens: must be a positive integer, got 0',
      'options.temperature: must be >= 0, got -1',
      'options.layout: must be "seed" or "concat", got "x"',
    ]);
  });

  it('a non-finite number from a TypeScript caller', () => {
    expect(problemsOf({ ...valid, options: { rewardScaling: Number.NaN } })).toEqual(['options.rewardScaling: must be finite, got NaN']);
  });

  it('a grouped trajectory whose id is not <groupId>/<sample>', () => {
    expect(problemsOf({ ...grouped, trajectoryId: 'grpo/gsm8k-17/4' })).toEqual(['trajectoryId: must be "<groupId>/<sample>" (grpo/gsm8k-17/3)']);
  });

  it("an invalid group, with the group schema's own rules", () => {
    const problems = problemsOf({ ...grouped, group: { ...grouped.group!, size: 3 } });
    expect(problems).toEqual(['group.sample: sample must be below size']);
  });

  it("a request over Temporal's 2 MB payload limit, saying so", () => {
    const problems = problemsOf({ ...valid, problem: 'x'.repeat(MAX_REQUEST_JSON_BYTES) });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^request: is \d+ bytes as JSON, over the 2096128-byte limit \(Temporal rejects payloads over 2 MiB\)/);
  });

  it('counts the payload in UTF-8 bytes: 800,000 three-byte characters are 2.4 MB', () => {
    expect(problemsOf({ ...valid, problem: '€'.repeat(800_000) })[0]).toMatch(/^request: is 24000\d\d bytes as JSON/);
  });

  it('something that is not an object', () => {
    expect(problemsOf(null)).toEqual(['request: expected object, got null']);
    expect(problemsOf('{"qid": 1}')).toEqual(['request: expected object, got string']);
  });
});

describe('InvalidTrajectoryRequest', () => {
  it('names the trajectory id when the request has one as a string', () => {
    expect(() => validateTrajectoryRequest({ ...valid, gold: 'x' })).toThrow(
      'invalid trajectory request run/gsm8k-17/3: gold: expected array, got string',
    );
    expect(() => validateTrajectoryRequest({ ...valid, trajectoryId: 5 })).toThrow(
      /^invalid trajectory request: trajectoryId: expected string, got number$/,
    );
  });
});

describe('trajectoryRequestSchema', () => {
  it('is the same rule set when parsed directly (the workflow may call safeParse)', () => {
    expect(trajectoryRequestSchema.safeParse(valid).success).toBe(true);
    expect(trajectoryRequestSchema.safeParse({ ...valid, extra: 1 }).success).toBe(false);
  });
});
