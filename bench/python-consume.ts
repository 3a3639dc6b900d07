// Consumption from Python, the package against the CLI path (python/benchmarks/consume_bench.py), on a real
// Temporal dev server and a project-local Postgres. `npm run bench:python-consume -- [--batches N] [--tokens T]`
import { spawn } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { PYTHON_PACKAGE_DIR, pythonPackageEnv } from '../src/stack/python-package-env.js';
import { startScratchStack } from '../src/stack/scratch-stack.js';

const python = await pythonPackageEnv(loadConfig().stateDir);
const stack = await startScratchStack({ prefix: 'ratchet-bench-' }); // Postgres migrated, Temporal's search attributes registered
try {
  const bench = spawn(python, [path.join(PYTHON_PACKAGE_DIR, 'benchmarks', 'consume_bench.py'), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      RATCHET_CLI: `${process.execPath} ${path.resolve('dist/cli/main.js')}`,
      LOG_LEVEL: 'error',
    },
  });
  const code = await new Promise<number | null>((resolve) => bench.on('exit', resolve));
  process.exitCode = code ?? 1;
} finally {
  await stack.stop();
}
