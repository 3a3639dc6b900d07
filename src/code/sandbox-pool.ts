import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { HarnessJob, HarnessResult } from './harness-protocol.js';
import { processesOwnedBy, reapSlot } from './process-count.js';
import { runHarness, type HarnessEnd } from './run-harness.js';
import { sandboxArgv } from './sandbox-command.js';
import { sandboxConfigFromEnv, type IsolationTool, type SandboxConfig } from './sandbox-config.js';
import { SandboxFailure } from './sandbox-failure.js';

/**
 * At most `concurrency` sandboxes at once, each in a slot of its own (its own host uid when the worker runs
 * as root). The isolation tool is chosen on first use by running a probe answer: bubblewrap when it works,
 * else `unshare`; when neither works every run throws `SandboxFailure`, as code never runs unconfined.
 */
export class CodeSandboxPool {
  readonly config: SandboxConfig;
  private readonly free: number[];
  private readonly waiting: Array<(slot: number) => void> = [];
  private chosen: Promise<IsolationTool> | undefined;

  constructor(config: Partial<SandboxConfig> = {}) {
    this.config = { ...sandboxConfigFromEnv(), ...config };
    this.free = Array.from({ length: this.config.concurrency }, (_, slot) => slot);
  }

  /** The isolation tool in use, once probed. */
  tool(): Promise<IsolationTool> {
    this.chosen ??= this.choose();
    return this.chosen;
  }

  /** Runs one job in a sandbox when a slot is free; see `runHarness`. */
  async run(job: HarnessJob, onResult: (result: HarnessResult) => boolean): Promise<HarnessEnd> {
    const tool = await this.tool();
    const slot = await this.acquire();
    try {
      return await this.runIn(tool, slot, job, onResult);
    } finally {
      this.release(slot);
    }
  }

  private async runIn(tool: IsolationTool, slot: number, job: HarnessJob, onResult: (result: HarnessResult) => boolean): Promise<HarnessEnd> {
    const path = resolveTool(tool);
    const argv = [path, ...sandboxArgv(tool, this.config).slice(1)];
    const root = process.getuid?.() === 0;
    const owner = root ? { uid: this.config.firstUid + slot, gid: this.config.firstUid + slot } : {};
    if (!root) job = { ...job, maxProcesses: job.maxProcesses + processesOwnedBy(process.getuid?.() ?? 0) };
    // Either tool gives the solution a tmpfs directory of its own; nothing is left on the machine to clean.
    const answerTimeoutMs = Math.min(this.config.answerTimeoutS, job.inputs.length * job.timeoutS + 5) * 1000;
    try {
      return await runHarness({ argv, cwd: '/', ...owner, answerTimeoutMs }, job, onResult);
    } finally {
      // Under root the slot's uid is the sandbox's alone: the next answer in this slot starts with nothing of this one left.
      if (owner.uid !== undefined) await reapSlot(owner.uid);
    }
  }

  private async choose(): Promise<IsolationTool> {
    const candidates: IsolationTool[] = this.config.tool ? [this.config.tool] : ['bwrap', 'unshare'];
    const reasons: string[] = [];
    for (const tool of candidates) {
      if (resolveTool(tool) === tool) {
        reasons.push(`${tool}: not on PATH`);
        continue;
      }
      try {
        await this.probe(tool);
        return tool;
      } catch (error) {
        reasons.push(`${tool}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    throw new SandboxFailure(`no isolation tool works on this machine (${reasons.join('; ')})`);
  }

  private async probe(tool: IsolationTool): Promise<void> {
    const job: HarnessJob = {
      code: 'print(sum(int(x) for x in input().split()))', fnName: '', inputs: ['2 3\n'], timeoutS: 10, memoryMb: 256,
      maxProcesses: this.config.maxProcesses, maxFileBytes: this.config.maxFileBytes, maxOutputBytes: this.config.maxOutputBytes,
    };
    let stdout: string | undefined;
    const slot = await this.acquire();
    try {
      await this.runIn(tool, slot, job, (result) => {
        stdout = result.status === 'ran' ? result.stdout : `${result.status}: ${result.error ?? ''}`;
        return true;
      });
    } finally {
      this.release(slot);
    }
    if (stdout?.trim() !== '5') throw new SandboxFailure(`the probe answer printed ${JSON.stringify(stdout ?? null)}, not "5"`);
  }

  private acquire(): Promise<number> {
    const slot = this.free.pop();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(slot: number): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else this.free.push(slot);
  }
}

/** The tool's absolute path from the worker's PATH (the sandbox itself gets no PATH), or its bare name. */
function resolveTool(tool: IsolationTool): string {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const path = join(dir, tool);
    if (dir !== '' && existsSync(path)) return path;
  }
  return tool;
}
