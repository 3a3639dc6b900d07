import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** What the README's trainer code and failure handling name, imported by package name. */
const README_NAMES = [
  'RolloutClient',
  'arrowFileBytes',
  'publishPolicyVersion',
  'LeaseLost',
  'UnknownBatch',
  'PolicyUnavailable',
  'PolicyRejectedRequest',
  'PolicyProtocolError',
  'DatabaseUnavailable',
  'InvalidTrajectoryRequest',
  'FailureType',
];

let scratch: string;
let packed: string[];
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ratchet-package-'));
  // --ignore-scripts: `npm test` has compiled dist/ already; `prepare` would only compile it again.
  const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], { cwd: root });
  const [report] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  packed = report!.files.map((file) => file.path);
  const installed = path.join(scratch, 'app', 'node_modules', 'ratchet-rollouts');
  await mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', path.join(scratch, report!.filename), '-C', installed, '--strip-components=1']);
  // The package's own dependencies, as an install would put them beside it (nothing else of the repository).
  await symlink(path.join(root, 'node_modules'), path.join(installed, 'node_modules'), 'dir');
}, 120_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('the published package', () => {
  it('holds the compiled library, the CLI and its data, and no tests or sources', () => {
    expect(packed).toEqual(expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'data/sample.jsonl']));
    expect(packed.filter((file) => /^(test|src|scripts|\.ratchet|node_modules)\//.test(file) || file.endsWith('.test.js'))).toEqual([]);
  });

  it('is importable by name from a clean directory, with everything the README uses', async () => {
    const app = path.join(scratch, 'app');
    const probe = `import * as ratchet from 'ratchet-rollouts'; console.log(JSON.stringify(Object.keys(ratchet)));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', probe], { cwd: app });
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining(README_NAMES));
  });

  it('runs its ratchet binary from there', async () => {
    const app = path.join(scratch, 'app');
    const { stdout } = await run(process.execPath, [path.join(app, 'node_modules/ratchet-rollouts/dist/cli/main.js'), '--version'], { cwd: app });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
