import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { stopProcess } from '../../src/stack/temporal-dev-server.js';
import { CPU_TASK_QUEUE, GPU_TASK_QUEUE } from '../../src/task-queues.js';

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
 * SIGKILLed like a lost host; every one is stopped by its own PID at the end. A process that dies on its own
 * is counted as a crash and started again, so one crash does not end the run.
 */
export class Fleet {
  private readonly members = new Map<string, Member>();
  private stopping = false;
  readonly crashes: string[] = [];
  readonly kills: string[] = [];

  constructor(private readonly cli: string, private readonly env: NodeJS.ProcessEnv) {}

  start(name: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
    if (this.stopping) throw new Error('the fleet is stopping');
    const child = spawn(process.execPath, [this.cli, ...args], { env: { ...process.env, ...this.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const member: Member = { args, env, child, stderr: '', expectedExit: false };
    child.stdout!.resume();
    child.stderr!.on('data', (chunk: Buffer) => { member.stderr = (member.stderr + chunk.toString()).slice(-2000); });
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

  /** Resident memory of the process now (VmRSS), in MiB. */
  async rssMiB(name: string): Promise<number> {
    const status = await readFile(`/proc/${this.pid(name)}/status`, 'utf8');
    const kib = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
    return Math.round((kib / 1024) * 10) / 10;
  }

  /** Stops every process by its PID: SIGTERM, then SIGKILL after `graceMs`. */
  async stopAll(graceMs = 3_000): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.members.values()].map((member) => {
      member.expectedExit = true;
      return stopProcess(member.child, graceMs).catch(() => member.child.kill('SIGKILL'));
    }));
  }

  private member(name: string): Member {
    const member = this.members.get(name);
    if (!member) throw new Error(`no process named ${name}`);
    return member;
  }
}

/** Waits until Temporal lists the process (`pid@host`, the SDK's default identity) as a poller of its queue. */
export async function waitUntilPolling(client: Client, child: ChildProcess, kind: 'cpu' | 'gpu', timeoutMs = 120_000): Promise<void> {
  const { TaskQueueType } = temporal.api.enums.v1;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${kind} worker pid ${child.pid} exited before polling`);
    const queue = await client.workflowService.describeTaskQueue({
      namespace: 'default',
      taskQueue: { name: kind === 'cpu' ? CPU_TASK_QUEUE : GPU_TASK_QUEUE },
      taskQueueType: kind === 'cpu' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    if ((queue.pollers ?? []).some((poller) => poller.identity?.startsWith(`${child.pid}@`))) return;
    if (Date.now() > deadline) throw new Error(`${kind} worker pid ${child.pid} not polling within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Resolves once the process prints `marker` on stdout (the simulated policy announces its URL). */
export function waitForLine(child: ChildProcess, marker: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`pid ${child.pid}: no ${marker} within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = marker.exec(seen);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve(match);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`pid ${child.pid} exited (${code}) before printing ${marker}`)));
  });
}
