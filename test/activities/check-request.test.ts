import { describe, expect, it } from 'vitest';
import { checkRequestActivity } from '../../src/activities/check-request.js';

const request = { trajectoryId: 'run/q 1/0', qid: 'q 1', problem: 'What is 1+1?', gold: ['2'] };

describe('the request check the workflow runs as a local activity', () => {
  it('resolves the options and timeouts with their defaults', async () => {
    const checked = await checkRequestActivity(undefined)({ request, workflowId: request.trajectoryId });
    expect(checked).toMatchObject({ options: { turns: 5, layout: 'seed', answerExtraction: 'stated' }, timeouts: { generateHeartbeatSeconds: 20 } });
    expect(checked).not.toHaveProperty('page');
  });

  it('links the trajectory page of `ratchet ui` when the worker knows its address', async () => {
    const checked = await checkRequestActivity('http://127.0.0.1:8300/')({ request, workflowId: request.trajectoryId });
    expect(checked).toMatchObject({ page: 'http://127.0.0.1:8300/trajectories/run%2Fq%201%2F0' });
  });

  it('answers an invalid request with every problem instead of throwing', async () => {
    const checked = await checkRequestActivity(undefined)({ request: { ...request, gold: [], options: { turns: 0 } }, workflowId: request.trajectoryId });
    expect('invalid' in checked && checked.invalid).toMatch(/gold/);
    expect('invalid' in checked && checked.invalid).toMatch(/turns/);
  });

  it('refuses a trajectory id that is not the workflow id', async () => {
    const checked = await checkRequestActivity(undefined)({ request, workflowId: 'other' });
    expect('invalid' in checked && checked.invalid).toMatch(/must equal the workflow id "other"/);
  });
});
