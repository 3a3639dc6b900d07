import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeSandboxPool } from '../../src/code/index.js';
import { workerEnvironments } from '../../src/environments/environment-set.js';
import { checkStepResult } from '../../src/environments/step-result.js';
import { EnvironmentModuleError, loadEnvironmentModules } from '../../src/stack/environment-modules.js';
import { VerifierPool } from '../../src/verifier/index.js';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ratchet-env-modules-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const task = { trajectoryId: 't/q/0', qid: 'q', problem: '', gold: [], seed: 1, args: { word: 'strawberry', letter: 'r' } };
const action = (text: string) => ({ turn: 0, text, tokenIds: [], finishReason: 'stop' as const, attempt: 1 });

describe("environments of the user's own (RATCHET_ENVIRONMENTS)", () => {
  it("loads the TypeScript example, whose answers pass the check every environment's answers pass", async () => {
    const [letterCount] = await loadEnvironmentModules(['examples/environments/letter-count.mjs']);
    expect(letterCount!.name).toBe('letter-count');
    expect(await letterCount!.reset(task)).toEqual({ messages: [{ role: 'user', content: expect.stringContaining('"r" occur in "strawberry"') }] });
    expect(checkStepResult(await letterCount!.step(task, action('\\boxed{3}'), undefined), 'step')).toMatchObject({
      verdict: 'correct',
      reward: 1,
      done: true,
    });
    expect(checkStepResult(await letterCount!.step(task, action('\\boxed{2}'), undefined), 'step')).toMatchObject({
      verdict: 'wrong',
      reward: -1,
      done: false,
    });
    expect(checkStepResult(await letterCount!.step(task, action('three'), undefined), 'step')).toMatchObject({ verdict: 'no_answer', done: false });
  });

  it('refuses a module that does not load, or exports no environment, naming it', async () => {
    await expect(loadEnvironmentModules([path.join(scratch, 'missing.mjs')])).rejects.toThrow(/cannot load the environment module .*missing\.mjs/);
    const notOne = path.join(scratch, 'not-one.mjs');
    await writeFile(notOne, 'export default { name: "x" };');
    await expect(loadEnvironmentModules([notOne])).rejects.toThrow(EnvironmentModuleError);
    const two = path.join(scratch, 'two.mjs');
    await writeFile(
      two,
      'const env = (name) => ({ name, reset: async () => ({ messages: [] }), step: async () => ({}) });\nexport default [env("a"), env("b")];',
    );
    expect((await loadEnvironmentModules([two])).map((e) => e.name)).toEqual(['a', 'b']);
  });

  it('runs beside the built-in environments, never in place of one', async () => {
    const verifier = new VerifierPool({ size: 1 });
    try {
      const sandbox = new CodeSandboxPool();
      const [letterCount] = await loadEnvironmentModules(['examples/environments/letter-count.mjs']);
      expect(workerEnvironments({ verifier, sandbox }, [letterCount!]).names()).toEqual(['math', 'code', 'math-python-tool', 'letter-count']);
      expect(() => workerEnvironments({ verifier, sandbox }, [{ ...letterCount!, name: 'math' }])).toThrow(/two environments are named "math"/);
    } finally {
      await verifier.close();
    }
  });
});
