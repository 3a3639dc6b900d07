import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NOT_READY, SandboxSession, type TestRun } from './run-test.js';
import { sandboxArgv } from './sandbox-command.js';
import { sandboxConfigFromEnv, type IsolationTool, type SandboxConfig } from './sandbox-config.js';
import { SandboxFailure } from './sandbox-failure.js';
import { sandboxJob } from './sandbox-job.js';
import { seccompFilter } from './seccomp-filter.js';
import { sandboxOwner } from './sandbox-owner.js';

/** One answer's code and the row's limits, as each of its tests runs it. */
export interface AnswerCode {
  code: string;
  fnName: string;
  timeoutS: number;
  memoryMb: number;
}

/** How long a sandbox may take to start before it, not the answer, has failed. */
const SETUP_TIMEOUT_MS = 15_000;

/**
 * At most `concurrency` answers at once, each in a sandbox of its own (its tests one after another, each in a
 * fresh fork of the sandbox's launcher: `answer`). The isolation tool is chosen on
 * first use by running a probe answer: bubblewrap when it works, else `unshare`; when neither works every run
 * throws `SandboxFailure`, as code never runs unconfined. Nothing is shared between sandboxes or between
 * worker processes: no uid range, no directory, no clean-up by uid.
 */
export class CodeSandboxPool {
  private settings: SandboxConfig | undefined;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private chosen: Promise<IsolationTool> | undefined;
  private filter: Buffer | undefined;

  /** `config` over the environment's settings, read at first use: a worker that never runs code never reads them. */
  constructor(private readonly overrides: Partial<SandboxConfig> = {}) {}

  get config(): SandboxConfig {
    this.settings ??= { ...sandboxConfigFromEnv(), ...this.overrides };
    return this.settings;
  }

  /** The isolation tool in use, once probed. */
  tool(): Promise<IsolationTool> {
    this.chosen ??= this.choose();
    return this.chosen;
  }

  /** Runs one test of an answer in a sandbox of its own when one is free; see `SandboxSession`. */
  async runTest(answer: AnswerCode, input: string, timeoutMs: number): Promise<TestRun> {
    const tests = this.answer(answer);
    try {
      return await tests.run(input, timeoutMs);
    } finally {
      tests.close();
    }
  }

  /**
   * The tests of one answer, one after another in one sandbox (a fresh fork of the launcher per test, cleaned
   * between them; a fresh sandbox after any test that killed it). It holds one of the pool's places from its first
   * test until `close`, which the caller must call.
   */
  answer(answer: AnswerCode): AnswerTests {
    return new AnswerTests(this, answer);
  }

  /** @internal Waits for a place in the pool; the function it resolves to gives it back (once). */
  async acquirePlace(): Promise<() => void> {
    await this.acquire();
    let released = false;
    return () => {
      if (!released) this.release();
      released = true;
    };
  }

  /** @internal A fresh sandbox for `answer` under `tool`. */
  session(tool: IsolationTool, answer: AnswerCode): SandboxSession {
    const argv = sandboxArgv(tool, this.config);
    argv[0] = resolveTool(tool);
    const job = sandboxJob(answer.code, answer.fnName, { timeoutS: answer.timeoutS, memoryMb: answer.memoryMb }, tool, this.config);
    return new SandboxSession(
      {
        argv,
        ...sandboxOwner(),
        setupTimeoutMs: SETUP_TIMEOUT_MS,
        maxOutputBytes: this.config.maxOutputBytes,
        memoryLimitBytes: answer.memoryMb * 1024 * 1024,
        ...(tool === 'bwrap' ? { seccompFilter: (this.filter ??= seccompFilter()) } : {}),
      },
      job,
    );
  }

  private async runWith(tool: IsolationTool, answer: AnswerCode, input: string, timeoutMs: number): Promise<TestRun> {
    const release = await this.acquirePlace();
    const session = this.session(tool, answer);
    try {
      const run = await session.run(input, timeoutMs);
      if (run === NOT_READY) throw new SandboxFailure(`${tool} was not ready`);
      return run;
    } finally {
      session.close();
      release();
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
    const answer = { code: 'print(sum(int(x) for x in input().split()))', fnName: '', timeoutS: 10, memoryMb: 256 };
    const run = await this.runWith(tool, answer, '2 3\n', 10_000);
    const printed = run.kind === 'exited' ? run.stdout.toString('utf8').trim() : run.kind;
    if (run.kind !== 'exited' || run.code !== 0 || printed !== '5') {
      throw new SandboxFailure(`the probe answer printed ${JSON.stringify(printed)}, not "5": ${run.stderr.trim().slice(-300)}`);
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.config.concurrency) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}

/**
 * How long a sandbox that already ran a test may take to be ready for the next (its launcher kills what the last
 * test left and empties its files first); past it, or when it ended, the test runs in a fresh sandbox.
 */
const REUSE_READY_MS = 2_000;

/** The tests of one answer; see `CodeSandboxPool.answer`. */
export class AnswerTests {
  private release: (() => void) | undefined;
  private current: SandboxSession | undefined;
  private closed = false;

  constructor(
    private readonly pool: CodeSandboxPool,
    private readonly code: AnswerCode,
  ) {}

  /** Runs the next test: in the answer's sandbox while it can take one, else in a fresh one. */
  async run(input: string, timeoutMs: number): Promise<TestRun> {
    if (this.closed) throw new Error("the answer's tests are closed");
    const tool = await this.pool.tool();
    this.release ??= await this.pool.acquirePlace();
    const started = performance.now();
    if (this.current?.usable) {
      const run = await this.current.run(input, timeoutMs, REUSE_READY_MS);
      if (run !== NOT_READY) return { ...run, elapsedMs: performance.now() - started };
    }
    this.current?.close();
    this.current = this.pool.session(tool, this.code);
    const run = await this.current.run(input, timeoutMs);
    if (run === NOT_READY) throw new SandboxFailure(`${tool} was not ready`);
    return { ...run, elapsedMs: performance.now() - started };
  }

  /** The pid of the tool (bwrap, unshare) holding the answer's current sandbox, if one is up: for tests that break it. */
  get sandboxPid(): number | undefined {
    return this.current?.usable ? this.current.pid : undefined;
  }

  /** Ends the answer's sandbox and gives its place back. */
  close(): void {
    this.closed = true;
    this.current?.close();
    this.current = undefined;
    this.release?.();
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
