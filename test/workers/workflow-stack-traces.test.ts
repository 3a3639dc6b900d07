import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// The SDK's workflow thread installs its stack-trace promise hook in `globalHandlers.install()`; Ratchet's patch
// (patches/@temporalio+worker+*.patch) skips it when TEMPORAL_WORKFLOW_STACK_TRACES=off, which the CPU worker sets.
const vmShared = createRequire(import.meta.url).resolve('@temporalio/worker/lib/workflow/vm-shared.js');

function promiseHookInstalled(setting: string | undefined): boolean {
  const env = { ...process.env };
  delete env.TEMPORAL_WORKFLOW_STACK_TRACES;
  if (setting !== undefined) env.TEMPORAL_WORKFLOW_STACK_TRACES = setting;
  const script = `const { globalHandlers } = require(${JSON.stringify(vmShared)}); globalHandlers.install(); process.stdout.write(String(globalHandlers.promiseHookInstalled));`;
  return execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }) === 'true';
}

describe('the workflow thread records promise stack traces only when asked', () => {
  it('is off when the CPU worker turns it off, and the patch is applied to the installed SDK', () => {
    expect(promiseHookInstalled('off')).toBe(false);
  });

  it('is on by the SDK default and when an operator asks for the UI stack trace tab', () => {
    expect(promiseHookInstalled(undefined)).toBe(true);
    expect(promiseHookInstalled('on')).toBe(true);
  });

  it('the CPU worker turns it off unless the operator set it', async () => {
    const before = process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    try {
      const { workflowStackTraces } = await import('../../src/workers/cpu-worker.js');
      workflowStackTraces();
      expect(process.env.TEMPORAL_WORKFLOW_STACK_TRACES).toBe('off');
      process.env.TEMPORAL_WORKFLOW_STACK_TRACES = 'on';
      workflowStackTraces();
      expect(process.env.TEMPORAL_WORKFLOW_STACK_TRACES).toBe('on');
    } finally {
      if (before === undefined) delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
      else process.env.TEMPORAL_WORKFLOW_STACK_TRACES = before;
    }
  });
});
