import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { VerifierRequest, VerifierResponse } from './pool-protocol.js';
import { startRunningBudget, type RunningBudget } from '../timing/running-budget.js';
import type { AnswerExtraction, Verdict, VerifierOptions, VerifierPoolOptions } from './types.js';

const DEFAULT_BUDGET_MS = 3000;
/** Heap limits per thread: a model cannot make a check grow memory without bound. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };
/** Threads that die before they are ready this many times in a row mean a broken build. */
const MAX_START_FAILURES = 3;

interface Job {
  id: number;
  request: VerifierRequest;
  resolve: (verdict: Verdict) => void;
  gold: string[];
  predicted: string | null;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  startedAt: number;
  budget: RunningBudget | null;
  retired: boolean;
}

/**
 * Runs checks in worker threads, each under a budget of running time (time this process spent frozen is not
 * counted: see running-budget.ts). An overrun thread is
 * terminated and replaced, and the check reported as `timeout`; a crash (an exception, running
 * out of heap) is an `error`. `verify` never rejects.
 *
 * The thread runs the compiled `check-worker.js` next to this module. When this module runs
 * from TypeScript sources (vitest), it uses `dist/verifier/check-worker.js` instead, so build
 * first (`npm test` runs `tsc` before vitest).
 */
export class VerifierPool {
  private readonly size: number;
  private readonly budgetMs: number;
  private readonly extraction: AnswerExtraction;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private startFailures = 0;
  private broken: string | null = null;
  private closed = false;

  constructor(options: VerifierPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? Math.min(2, availableParallelism()));
    this.budgetMs = Math.max(1, options.budgetMs ?? DEFAULT_BUDGET_MS);
    this.extraction = options.extraction ?? 'stated';
    for (let k = 0; k < this.size; k++) this.slots.push(this.spawn());
  }

  /**
   * Checks a model output against the gold answer(s); resolves with a verdict, never rejects.
   * `options.extraction` overrides the pool's extraction for this check (a run's own setting).
   */
  verify(gold: string | string[], modelOutput: string, options: VerifierOptions = {}): Promise<Verdict> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      const request = { id, gold, output: modelOutput, extraction: options.extraction ?? this.extraction };
      const job: Job = { id, request, resolve, gold: [], predicted: null };
      if (this.closed || this.broken) {
        this.finish(job, 'error', this.broken ?? 'verifier pool is closed', 0);
        return;
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Terminates every thread; checks still queued resolve as `error`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.finish(job, 'error', 'verifier pool closed', 0);
    await Promise.all(
      this.slots.map(async (slot) => {
        slot.retired = true;
        slot.budget?.cancel();
        if (slot.job) this.finish(slot.job, 'error', 'verifier pool closed', performance.now() - slot.startedAt);
        slot.job = null;
        await slot.worker.terminate();
      }),
    );
  }

  private spawn(): Slot {
    // The thread runs plain compiled JS: flags of the parent (`--input-type`, loaders) would only break it.
    const worker = new Worker(workerUrl(), { resourceLimits: RESOURCE_LIMITS, execArgv: [] });
    const slot: Slot = { worker, ready: false, job: null, startedAt: 0, budget: null, retired: false };
    worker.unref();
    worker.on('message', (message: VerifierResponse) => this.onMessage(slot, message));
    worker.on('error', (error) => this.onCrash(slot, `${error.name}: ${error.message}`));
    worker.on('exit', (code) => this.onCrash(slot, `verifier thread exited with code ${code}`));
    return slot;
  }

  private onMessage(slot: Slot, message: VerifierResponse): void {
    if (slot.retired) return;
    if (message.kind === 'ready') {
      slot.ready = true;
      this.startFailures = 0;
      this.pump();
      return;
    }
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    if (message.kind === 'extracted') {
      job.gold = message.gold;
      job.predicted = message.predicted;
      return;
    }
    this.release(slot);
    job.resolve({ ...message.judgement, elapsedMs: performance.now() - slot.startedAt });
    this.pump();
  }

  private onCrash(slot: Slot, reason: string): void {
    if (slot.retired) return;
    const job = slot.job;
    if (job) {
      this.release(slot);
      this.finish(job, 'error', reason, performance.now() - slot.startedAt);
    } else if (!slot.ready && ++this.startFailures >= MAX_START_FAILURES) {
      this.broken = `verifier threads fail to start: ${reason}`;
      for (const queued of this.queue.splice(0)) this.finish(queued, 'error', this.broken, 0);
    }
    this.replace(slot);
  }

  private onTimeout(slot: Slot): void {
    const job = slot.job;
    if (!job || slot.retired) return;
    this.release(slot);
    this.finish(job, 'timeout', `exceeded the ${this.budgetMs} ms budget`, performance.now() - slot.startedAt);
    this.replace(slot);
  }

  private replace(slot: Slot): void {
    slot.retired = true;
    slot.budget?.cancel();
    void slot.worker.terminate();
    const index = this.slots.indexOf(slot);
    if (index >= 0 && !this.closed && !this.broken) this.slots[index] = this.spawn();
    this.pump();
  }

  private release(slot: Slot): void {
    slot.budget?.cancel();
    slot.budget = null;
    slot.job = null;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (!slot.ready || slot.job || slot.retired) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.startedAt = performance.now();
      slot.budget = startRunningBudget(this.budgetMs, () => this.onTimeout(slot));
      slot.worker.postMessage(job.request);
    }
    // Threads keep the process alive only while there is work: an idle pool never blocks exit.
    const waiting = this.queue.length > 0;
    for (const slot of this.slots) {
      if (slot.job || (waiting && !slot.retired)) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  private finish(job: Job, status: 'timeout' | 'error', detail: string, elapsedMs: number): void {
    job.resolve({ equal: false, status, predicted: job.predicted, gold: job.gold, detail, elapsedMs });
  }
}

function workerUrl(): URL {
  const beside = new URL('./check-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  const built = new URL('../../dist/verifier/check-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return built;
  throw new Error(`verifier worker not found at ${fileURLToPath(beside)}: build it with "tsc -p tsconfig.json"`);
}
