import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { stopProcess } from '../../src/stack/child-process.js';
import { pauseFor, resumeAllPaused } from '../../scripts/support/paused-process.js';

/** One `ratchet` process the soak runs: a worker, the admission controller or the simulated policy. */
interface Member {
  args: string[];
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  stderr: string;
  /** Set just before the soak kills or stops it, so its exit is not counted as a crash. */
  expectedExit: boolean;
}

/**
 * The soak's child processes, by name. Each is a real `node dist/cli/main.js …` process, so it can be
 * SIGKILLed like a lost host or frozen like a stalled one; every one is stopped by its own PID at the end. A process that dies on its own
 * is counted as a crash and started again, so one crash does not end the run.
 */
export class Fleet {
  private readonly members = new Map<string, Member>();
  private stopping = false;
  readonly crashes: string[] = [];
  readonly kills: string[] = [];
  readonly pauses: string[] = [];

  constructor(
    private readonly cli: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  start(name: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
    if (this.stopping) throw new Error('the fleet is stopping');
    const child = spawn(process.execPath, [this.cli, ...args], { env: { ...process.env, ...this.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const member: Member = { args, env, child, stderr: '', expectedExit: false };
    child.stdout!.resume();
    child.stderr!.on('data', (chunk: Buffer) => {
      member.stderr = (member.stderr + chunk.toString()).slice(-2000);
    });
    child.once('exit', (code, signal) => {
      if (member.expectedExit || this.stopping) return;
      this.crashes.push(`${name} (pid ${child.pid}) exited ${code ?? signal}: ${member.stderr.trim().slice(-300)}`);
      if (this.members.get(name) === member) this.start(name, args, env);
    });
    this.members.set(name, member);
    return child;
  }

  pid(name: string): number {
    return this.member(name).child.pid!;
  }

  /** SIGKILL (no shutdown of any kind), then the same command again. */
  async killAndRestart(name: string): Promise<ChildProcess> {
    const member = this.member(name);
    member.expectedExit = true;
    const exited = new Promise((resolve) => member.child.once('exit', resolve));
    if (member.child.exitCode === null && member.child.signalCode === null) member.child.kill('SIGKILL');
    await exited;
    this.kills.push(name);
    return this.start(name, member.args, member.env);
  }

  /**
   * Freezes the process and everything under it (SIGSTOP) for `seconds`, then resumes it (SIGCONT). A process
   * restarted meanwhile is not touched: the pause is of the PID that was running when it began.
   */
  async pause(name: string, seconds: number): Promise<void> {
    await pauseFor(this.pid(name), seconds * 1000);
    this.pauses.push(`${name} ${seconds} s`);
  }

  /** Resident memory of the process now (VmRSS), in MiB. */
  async rssMiB(name: string): Promise<number> {
    const status = await readFile(`/proc/${this.pid(name)}/status`, 'utf8');
    const kib = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
    return Math.round((kib / 1024) * 10) / 10;
  }

  /** Stops every process by its PID: SIGTERM, then SIGKILL after `graceMs`. */
  async stopAll(graceMs = 3_000): Promise<void> {
    this.stopping = true;
    resumeAllPaused(); // a frozen process would not see its SIGTERM
    await Promise.all(
      [...this.members.values()].map((member) => {
        member.expectedExit = true;
        return stopProcess(member.child, graceMs).catch(() => member.child.kill('SIGKILL'));
      }),
    );
  }

  private member(name: string): Member {
    const member = this.members.get(name);
    if (!member) throw new Error(`no process named ${name}`);
    return member;
  }
}
