import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { exitOf, stopChild } from '../../src/stack/child-process.js';
import { freePort } from '../../src/stack/free-port.js';
import { PYTHON_PACKAGE_DIR, pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { startTemporalDevServer, type TemporalDevServer } from '../../src/stack/temporal-dev-server.js';

// Issue 36: `ratchet-env serve` (and Python clients) aborted at exit with `Fatal Python error: PyGILState_Release`
// in about 1 of 3 stops: the temporalio SDK's runtime threads call into Python while the interpreter finalizes
// (temporalio/sdk-python#300). Both now leave through `exit_process` once shut down (python/ratchet_rollouts/process_exit.py).
const GUESS_NUMBER = path.resolve(import.meta.dirname, '../../examples/environments/guess_number.py');
const DRIVER = path.join(PYTHON_PACKAGE_DIR, 'tests/drive_environment.py');
const STOPS = 10;

let temporal: TemporalDevServer;
let python: string;
beforeAll(async () => {
  python = await pythonPackageEnv(loadConfig().stateDir);
  temporal = await startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
}, 600_000);
afterAll(async () => {
  await temporal?.stop();
});

/** Runs `python args…` to its end: its exit and stderr. */
async function runPython(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(python, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exit = await exitOf(child);
  clearTimeout(timer);
  return { ...exit, stderr };
}

describe('the Python processes exit cleanly', () => {
  it(`ratchet-env serve, stopped with SIGTERM ${STOPS} times after serving steps, exits 0 every time, never "Fatal Python error"`, async () => {
    const outcomes: { serve: string; driver: string }[] = [];
    for (let i = 0; i < STOPS; i++) {
      const serve = spawn(python, ['-m', 'ratchet_rollouts.environment_worker', 'serve', GUESS_NUMBER], {
        env: { ...process.env, TEMPORAL_ADDRESS: temporal.address },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      serve.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      serve.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      try {
        await new Promise<void>((resolve, reject) => {
          const seen = () => {
            if (output.includes('serving environment guess-number')) resolve();
          };
          serve.stdout.on('data', seen);
          serve.once('exit', () => reject(new Error(`ratchet-env serve exited before serving: ${output}`)));
        });
        // The driver is a client too: a workflow worker and a client in one short-lived process.
        const driver = await runPython([DRIVER, temporal.address, 'guess-number', '3']);
        const exit = await stopChild(serve, { graceMs: 20_000 });
        outcomes.push({
          serve: `${exit.code ?? exit.signal}${/Fatal Python error/.test(output) ? ' fatal' : ''}`,
          driver: `${driver.code ?? driver.signal}${/Fatal Python error/.test(driver.stderr) ? ' fatal' : ''}`,
        });
      } finally {
        await stopChild(serve, { signal: 'SIGKILL' });
      }
    }
    expect(outcomes).toEqual(Array.from({ length: STOPS }, () => ({ serve: '0', driver: '0' })));
  }, 600_000);
});
