// Consumption from Python, the package against the CLI path (python/benchmarks/consume_bench.py), on a real
// Temporal dev server and a project-local Postgres. `npm run bench:python-consume -- [--batches N] [--tokens T]`
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgresOnFreePort } from '../src/stack/embedded-postgres.js';
import { freePort } from '../src/stack/free-port.js';
import { PYTHON_PACKAGE_DIR, pythonPackageEnv } from '../src/stack/python-package-env.js';
import { startTemporalDevServer } from '../src/stack/temporal-dev-server.js';
import { openDatabase } from '../src/store/database.js';

const python = await pythonPackageEnv(loadConfig().stateDir);
const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-bench-'));
await chmod(stateDir, 0o755);
const temporal = await startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
try {
  await (await openDatabase(postgres.url)).end(); // migrations
  const bench = spawn(python, [path.join(PYTHON_PACKAGE_DIR, 'benchmarks', 'consume_bench.py'), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: postgres.url, TEMPORAL_ADDRESS: temporal.address, RATCHET_CLI: `${process.execPath} ${path.resolve('dist/cli/main.js')}`, LOG_LEVEL: 'error' },
  });
  const code = await new Promise<number | null>((resolve) => bench.on('exit', resolve));
  process.exitCode = code ?? 1;
} finally {
  await postgres.stop();
  await temporal.stop();
  await rm(stateDir, { recursive: true, force: true });
}
