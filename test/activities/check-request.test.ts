import { describe, expect, it } from 'vitest';
import { checkRequestActivity } from '../../src/activities/check-request.js';
import { EnvironmentSet, environmentSeed } from '../../src/environments/environment-set.js';
import type { Environment } from '../../src/environments/environment.js';

// The names are what the check reads of a worker's environments.
const named = (name: string): Environment => ({
  name,
  reset: async () => ({ messages: [] }),
  step: async () => {
    throw new Error('not stepped');
  },
});
const environments = new EnvironmentSet(['math', 'code', 'math-python-tool'].map(named));
const check = (uiUrl?: string) => checkRequestActivity(uiUrl, environments);

const request = { trajectoryId: 'run/q 1/0', qid: 'q 1', problem: 'What is 1+1?', gold: ['2'] };

describe('the request check the workflow runs as a local activity', () => {
  it('resolves the options and timeouts with their defaults', async () => {
    const checked = await check()({ request, workflowId: request.trajectoryId });
    expect(checked).toMatchObject({ options: { turns: 5, layout: 'seed', answerExtraction: 'stated' }, timeouts: { generateHeartbeatSeconds: 20 } });
    expect(checked).not.toHaveProperty('page');
  });

  it('links the trajectory page of `ratchet ui` when the worker knows its address', async () => {
    const checked = await check('http://127.0.0.1:8300/')({ request, workflowId: request.trajectoryId });
    expect(checked).toMatchObject({ page: 'http://127.0.0.1:8300/trajectories/run%2Fq%201%2F0' });
  });

  it('answers an invalid request with every problem instead of throwing', async () => {
    const checked = await check()({ request: { ...request, gold: [], options: { turns: 0 } }, workflowId: request.trajectoryId });
    expect('invalid' in checked && checked.invalid).toMatch(/gold/);
    expect('invalid' in checked && checked.invalid).toMatch(/turns/);
  });

  it("places the environment: a worker's own in-process, any other on its own task queue, with the episode's seed", async () => {
    const seed = environmentSeed(request.trajectoryId);
    expect(await check()({ request, workflowId: request.trajectoryId })).toMatchObject({ environment: { name: 'math', seed } });
    expect(await check()({ request, workflowId: request.trajectoryId })).not.toHaveProperty('environment.taskQueue');
    const game = { ...request, environment: 'guess-number', environmentArgs: { low: 1, high: 100 } };
    expect(await check()({ request: game, workflowId: request.trajectoryId })).toMatchObject({
      environment: { name: 'guess-number', taskQueue: 'ratchet-env-guess-number', seed },
    });
  });

  it('refuses an environment name that cannot name a task queue, and the code environment without tests', async () => {
    const bad = await check()({ request: { ...request, environment: 'no spaces/here' }, workflowId: request.trajectoryId });
    expect('invalid' in bad && bad.invalid).toMatch(/environment/);
    const code = await check()({ request: { ...request, environment: 'code' }, workflowId: request.trajectoryId });
    expect('invalid' in code && code.invalid).toMatch(/code.*required by the `code` environment/);
  });

  it('refuses a trajectory id that is not the workflow id', async () => {
    const checked = await check()({ request, workflowId: 'other' });
    expect('invalid' in checked && checked.invalid).toMatch(/must equal the workflow id "other"/);
  });
});
