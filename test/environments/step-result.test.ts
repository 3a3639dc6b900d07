import { describe, expect, it } from 'vitest';
import { EnvironmentFailure } from '../../src/environments/environment.js';
import { checkStart, checkStepResult } from '../../src/environments/step-result.js';

const good = { observations: [{ role: 'tool', content: 'Too low.' }], reward: 0, success: false, done: false, verdict: 'too_low', info: { guesses: 1 }, state: { secret: 7 } };

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
  ])('refuses a malformed step, naming the field (%#)', (value, message) => {
    let thrown: unknown;
    try {
      checkStepResult(value, 'step');
    } catch (error) {
      thrown = error;
    }
    // The environment's bug, never a reward: not retried (the same code answers the same), typed infrastructure.
    expect(thrown).toBeInstanceOf(EnvironmentFailure);
    expect((thrown as EnvironmentFailure).message).toMatch(message);
    expect(thrown).toMatchObject({ failureClass: 'infrastructure', failureType: 'EnvironmentError', retryable: false });
  });

  it('starts from at least one message, or a rendered prompt', () => {
    expect(checkStart({ messages: [{ role: 'user', content: 'Guess.' }], state: { n: 1 } }, 'reset')).toEqual({ messages: [{ role: 'user', content: 'Guess.' }], state: { n: 1 } });
    expect(checkStart({ renderedPrompt: '<|im_start|>user\nq<|im_end|>\n' }, 'reset')).toEqual({ renderedPrompt: '<|im_start|>user\nq<|im_end|>\n' });
    expect(() => checkStart({ messages: [] }, 'reset')).toThrow(/reset\.messages must hold at least 1 message/);
  });

  it('says data failures are not retried and infrastructure ones are, unless told otherwise', () => {
    expect(new EnvironmentFailure('x', 'data')).toMatchObject({ failureType: 'EnvironmentDataError', retryable: false });
    expect(new EnvironmentFailure('x', 'infrastructure')).toMatchObject({ failureType: 'EnvironmentError', retryable: true });
    expect(new EnvironmentFailure('x', 'infrastructure', { failureType: 'VerifierTimeout' })).toMatchObject({ failureType: 'VerifierTimeout', retryable: true });
  });
});
