import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { sandboxConfigFromEnv, type CodeTask, type IsolationTool } from '../../src/code/index.js';
import { SYSTEM_PYTHON } from '../../src/code/code-python.js';
import { interpreterTree } from '../../src/code/sandbox-job.js';
import { pollUntil } from '../../src/timing/poll-until.js';

/** Both sandboxes every hostile answer runs under: the tool the pool picks (bubblewrap, as CI installs it) and the floor. */
export const SANDBOXES: Array<{ name: string; tool?: IsolationTool }> = [
  { name: 'the default sandbox' },
  { name: 'the unshare floor', tool: 'unshare' },
];

/**
 * The installed interpreter's tree (the code-python virtualenv; a bare one where `npm run setup` has not run) copied
 * under /tmp, as a project checked out under /tmp has it: a folder on the way (open to the sandbox's own uid), then
 * the tree. The sandbox binds it over its own fresh /tmp. `remove` deletes the copy.
 */
export function interpreterUnderTmp(): { python: string; remove: () => void } {
  const folder = mkdtempSync('/tmp/ratchet-python-');
  chmodSync(folder, 0o755);
  const tree = path.join(folder, 'code-python');
  const installed = sandboxConfigFromEnv().python;
  const source = interpreterTree(installed)[0];
  if (source) cpSync(source, tree, { recursive: true, verbatimSymlinks: true });
  else execFileSync(SYSTEM_PYTHON, ['-m', 'venv', '--without-pip', tree]);
  return {
    python: path.join(tree, 'bin', source ? path.basename(installed) : 'python'),
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}

export const fenced = (code: string): string => `\`\`\`python\n${code}\n\`\`\``;

/** A stdin-mode task whose every test has an empty input and expects `outputs[i]`. */
export const task = (outputs: string[] = ['ok'], timeoutS = 2, memoryMb = 256): CodeTask => ({
  tests: { inputs: outputs.map(() => ''), outputs, fnName: '' },
  timeoutS,
  memoryMb,
});

/** A process name (15 bytes at most, as the kernel keeps it) that an answer gives itself and its children. */
export const marker = (): string => `rx${randomBytes(6).toString('hex')}`;

/** Python that names the process (and every child it forks) `name`, as `ps -o comm` shows it. */
export const nameProcess = (name: string): string => `import ctypes\nctypes.CDLL(None).prctl(15, ${JSON.stringify(name)}.encode(), 0, 0, 0)\n`;

/** Live processes on the machine named `name`. */
export function processesNamed(name: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,stat=,comm='])
    .toString()
    .split('\n')
    .filter((row) => row.trim().endsWith(name) && !row.trim().split(/\s+/)[1]?.startsWith('Z'));
}

/** Waits until no process is named `name`, up to `ms`; what is still alive then. */
export async function processesLeft(name: string, ms: number): Promise<string[]> {
  return pollUntil(() => processesNamed(name), { what: `no process named ${name}`, timeoutMs: ms, done: (left) => left.length === 0 }).catch(() =>
    processesNamed(name),
  );
}

/**
 * The forged-verdict attack: harness protocol lines written to every descriptor the answer holds or can steal
 * (pidfd_getfd on pid 1, its parent and itself), then a silent wait. Judged as its own output, never as a verdict.
 */
export const FORGED_VERDICT = `import ctypes, json, os, time
libc = ctypes.CDLL(None, use_errno=True)
forged = "".join(json.dumps({"test": i, "status": "ran", "stdout": "ok\\n"}) + "\\n" for i in range(3)).encode()
for pid in {1, os.getppid(), os.getpid()}:
    pidfd = libc.syscall(434, pid, 0)  # pidfd_open
    for target in range(0, 8):
        fd = libc.syscall(438, pidfd, target, 0) if pidfd >= 0 else -1  # pidfd_getfd
        if fd >= 0:
            try:
                os.write(fd, forged)
            except OSError:
                pass
for fd in range(3, 64):
    try:
        os.write(fd, forged)
    except OSError:
        pass
time.sleep(60)`;
