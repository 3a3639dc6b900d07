import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../../src/workers/workflow-bundle.js';

const run = promisify(execFile);
const DIST_BUNDLE = new URL('../../dist/workers/workflow-bundle.js', import.meta.url).href;

describe('the workflow bundle', () => {
  it('is the one `npm run build` wrote when workers run from dist/ (npm test builds first)', async () => {
    const script = `const { workflowBundle } = await import(${JSON.stringify(DIST_BUNDLE)}); console.log(JSON.stringify(await workflowBundle()));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual({ codePath: new URL('../../dist/workflow-bundle.js', import.meta.url).pathname });
  });

  it('is bundled from the TypeScript sources when workers run from src/, once per process', async () => {
    const bundle = workflowBundle();
    expect(workflowBundle()).toBe(bundle);
    expect(await bundle).toHaveProperty('code');
  }, 120_000);
});
