import { describe, expect, it } from 'vitest';
import { EnvironmentFailure } from '../../src/environments/environment.js';
import { checkStart, checkStepResult } from '../../src/environments/step-result.js';

const good = {
  observations: [{ role: 'tool', content: 'Too low.' }],
  reward: 0,
  success: false,
  done: false,
  verdict: 'too_low',
  info: { guesses: 1 },
  state: { secret: 7 },
};

describe('what an environment may answer', () => {
  it('keeps a well-formed step, filling what it may leave out', () => {
    expect(checkStepResult(good, 'step')).toEqual({ ...good, predicted: null });
    expect(checkStepResult({ ...good, info: undefined, state: undefined }, 'step')).toEqual({ ...good, info: {}, state: undefined, predicted: null });
  });

  it.each([
    [{ ...good, reward: Number.NaN }, /step\.reward must be a finite number/],
    [{ ...good, reward: '1' }, /step\.reward must be a finite number, got "1"/],
    [{ ...good, success: 1 }, /step\.success must be a boolean/],
    [{ ...good, done: 'yes' }, /step\.done must be a boolean/],
    [{ ...good, verdict: '' }, /step\.verdict must be a label of 1 to 64 characters/],
    [{ ...good, verdict: 'x'.repeat(65) }, /step\.verdict must be a label/],
    [{ ...good, observations: 'Too low.' }, /step\.observations must be a list/],
    [{ ...good, observations: [{ role: 'Tool Output', content: 'x' }] }, /step\.observations\[0\]\.role must be a chat role/],
    [{ ...good, observations: [{ role: 'tool', content: 7 }] }, /step\.observations\[0\]\.content must be a string/],
    [{ ...good, info: [1] }, /step\.info must be an object/],
    [{ ...good, predicted: 3 }, /step\.predicted must be a string or null/],
    [null, /step must be an object/],
    // Release 6: what would not come back from history as itself, or would swell it, is refused by name and size.
    [{ ...good, state: { n: 1n } }, /step\.state\.n is a bigint, not a JSON value/],
    [{ ...good, state: { at: new Date(0) } }, /step\.state\.at is a Date, not a plain JSON object/],
    [{ ...good, state: { f: () => 1 } }, /step\.state\.f is a function/],
    [{ ...good, state: { n: Number.POSITIVE_INFINITY } }, /step\.state\.n is Infinity, which JSON cannot hold/],
    [
      {
        ...good,
        state: (() => {
          const cycle: Record<string, unknown> = {};
          cycle.self = cycle;
          return cycle;
        })(),
      },
      /step\.state\.self refers back to itself/,
    ],
    [{ ...good, state: { board: 'x'.repeat(70_000) } }, /step\.state is 70\d{3} bytes of JSON, over the 65536 a state may hold/],
    [{ ...good, info: { at: new Map() } }, /step\.info\.at is a Map/],
    [
      { ...good, observations: [{ role: 'tool', content: 'x'.repeat(5_000_000) }] },
      /step\.observations hold 5000000 characters, over the 524288 a step may add/,
    ],
  ])('refuses a malformed step, naming the field (%#)', (value, message) => {
    let thrown: unknown;
    try {
      checkStepResult(value, 'step');
    } catch (error) {
      thrown = error;
    }
    // The environment's bug, never a reward: deterministic (the same code answers the same), so data, not retried.
    expect(thrown).toBeInstanceOf(EnvironmentFailure);
    expect((thrown as EnvironmentFailure).message).toMatch(message);
    expect(thrown).toMatchObject({ failureClass: 'data', failureType: 'EnvironmentDataError', retryable: false });
  });

  it('starts from at least one message, or a rendered prompt', () => {
    expect(checkStart({ messages: [{ role: 'user', content: 'Guess.' }], state: { n: 1 } }, 'reset')).toEqual({
      messages: [{ role: 'user', content: 'Guess.' }],
      state: { n: 1 },
    });
    expect(checkStart({ renderedPrompt: '<|im_start|>user\nq<|im_end|>\n' }, 'reset')).toEqual({ renderedPrompt: '<|im_start|>user\nq<|im_end|>\n' });
    expect(() => checkStart({ messages: [] }, 'reset')).toThrow(/reset\.messages must hold at least 1 message/);
  });

  it('says data failures are not retried and infrastructure ones are, unless told otherwise', () => {
    expect(new EnvironmentFailure('x', 'data')).toMatchObject({ failureType: 'EnvironmentDataError', retryable: false });
    expect(new EnvironmentFailure('x', 'infrastructure')).toMatchObject({ failureType: 'EnvironmentError', retryable: true });
    expect(new EnvironmentFailure('x', 'infrastructure', { failureType: 'VerifierTimeout' })).toMatchObject({
      failureType: 'VerifierTimeout',
      retryable: true,
    });
  });
});
