import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, sandboxConfigFromEnv, verifyCodeAnswer, type CodeTask } from '../../src/code/index.js';
import { codePythonPaths, SYSTEM_PYTHON } from '../../src/code/code-python.js';
import { fenced, SANDBOXES, task } from './sandbox-fixtures.js';

// The environment a worker has by default: no RATCHET_CODE_PYTHON.
const { RATCHET_CODE_PYTHON: _override, ...defaults } = process.env;
const venv = codePythonPaths(path.resolve(defaults.RATCHET_STATE_DIR || '.ratchet'));

const sums: CodeTask = { tests: { inputs: ['1 2 3\n', '-4 10\n'], outputs: ['6 14\n', '6 116\n'], fnName: '' }, timeoutS: 10, memoryMb: 512 };
const cumsum: CodeTask = { tests: { inputs: ['[1, 2, 3]'], outputs: ['[1, 3, 6]'], fnName: 'running' }, timeoutS: 10, memoryMb: 512 };

describe.each(SANDBOXES)('$name with the default interpreter', ({ tool }) => {
  const sandbox = new CodeSandboxPool({ ...sandboxConfigFromEnv(defaults), concurrency: 2, ...(tool ? { tool } : {}) });

  it('is the code-python virtualenv that `npm run setup` makes', () => {
    expect(existsSync(venv.marker), `no code-python virtualenv at ${venv.dir}: run \`npm run setup\` (ratchet setup) first`).toBe(true);
    expect(sandbox.config.python).toBe(venv.python);
  });

  it('judges a correct answer that imports numpy correct, in stdin and in call mode', async () => {
    const stdin = 'import numpy as np\nxs = np.array(input().split(), dtype=np.int64)\nprint(int(xs.sum()), int((xs ** 2).sum()))';
    const call = 'import numpy as np\ndef running(xs):\n    return np.cumsum(np.array(xs)).tolist()';
    const verdicts = await Promise.all([verifyCodeAnswer(sums, fenced(stdin), { sandbox }), verifyCodeAnswer(cumsum, fenced(call), { sandbox })]);
    expect(
      verdicts.map((verdict) => verdict.status),
      `numpy did not import: run \`npm run setup\` (${verdicts[0]!.detail})`,
    ).toEqual(['correct', 'correct']);
  });

  it('shows the virtualenv read-only and nothing else of the project around it', async () => {
    // Each folder above the virtualenv holds only the next one down: /work holds main, /work/main only .ratchet…
    const parts = venv.dir.split('/').slice(1);
    const around = parts.slice(1).map((only, index) => [`/${parts.slice(0, index + 1).join('/')}`, only]);
    const code = `import os, site
assert any(p.startswith(${JSON.stringify(venv.dir)}) for p in site.getsitepackages()), site.getsitepackages()
seen = {parent: sorted(os.listdir(parent)) for parent, only in ${JSON.stringify(around)} if os.listdir(parent) != [only]}
try:
    open(${JSON.stringify(path.join(venv.dir, 'planted'))}, "w")
    seen["written"] = True
except OSError:
    pass
print("alone" if not seen else "seen %s" % seen)`;
    const verdict = await verifyCodeAnswer(task(['alone'], 10), fenced(code), { sandbox });
    expect(verdict.detail).not.toContain('seen');
    expect(verdict.status).toBe('correct');
  });

  it('runs an interpreter whose tree lies under /tmp, which the sandbox covers with its own', async () => {
    const tree = mkdtempSync(path.join(os.tmpdir(), 'ratchet-venv-'));
    try {
      chmodSync(tree, 0o755); // the sandbox's uid is none of the worker's
      execFileSync(SYSTEM_PYTHON, ['-m', 'venv', '--without-pip', tree]);
      // The tool the pool chose for the virtualenv: another interpreter must not make it fall back to the floor.
      const elsewhere = new CodeSandboxPool({ ...sandbox.config, tool: await sandbox.tool(), python: path.join(tree, 'bin', 'python') });
      const verdict = await verifyCodeAnswer(task([tree]), fenced('import sys\nprint(sys.prefix)  # the virtualenv, found'), { sandbox: elsewhere });
      expect(verdict.status).toBe('correct');
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});

describe("the code answers' interpreter", () => {
  it('is RATCHET_CODE_PYTHON when set, and /usr/bin/python3 without a virtualenv the sandboxes can reach', () => {
    expect(sandboxConfigFromEnv({ RATCHET_CODE_PYTHON: '/opt/python/bin/python3' }).python).toBe('/opt/python/bin/python3');
    const empty = mkdtempSync(path.join(os.tmpdir(), 'ratchet-state-'));
    try {
      expect(sandboxConfigFromEnv({ RATCHET_STATE_DIR: empty }).python).toBe(SYSTEM_PYTHON);
      // A virtualenv in a folder other users cannot enter (mkdtemp's 0700): under root, sandboxes run as other uids.
      const closed = codePythonPaths(empty);
      mkdirSync(path.dirname(closed.python), { recursive: true });
      writeFileSync(closed.python, '');
      writeFileSync(closed.marker, 'made');
      expect(sandboxConfigFromEnv({ RATCHET_STATE_DIR: empty }).python).toBe(process.getuid?.() === 0 ? SYSTEM_PYTHON : closed.python);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
