import type pg from 'pg';
import type { InferenceBackend } from '../../src/policy/inference-backend.js';
import { storeCompletedTrajectory } from '../../src/store/write/trajectory-store.js';
import type { StoredTurn } from '../../src/store/write/turn-store.js';
import { feedbackTokens, promptIds } from '../../src/tokens/conversation-tokens.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { resolveRolloutOptions } from '../../src/trajectory/options.js';
import { packTrajectory } from '../../src/trajectory/packing.js';
import type { TrajectoryRequest } from '../../src/trajectory/request.js';
import { returnsToGo, shapeReward } from '../../src/trajectory/rewards.js';
import { stoppedWithoutEos, type EndReason, type FinishReason, type TurnRecord } from '../../src/trajectory/turn.js';
import type { VerifierPool } from '../../src/verifier/index.js';
import { samplingOf } from '../../src/trajectory/sampling.js';

export interface InProcessLoopDeps {
  pool: pg.Pool;
  tokenizer: ModelTokenizer;
  verifier: VerifierPool;
  backend: InferenceBackend;
  /** Generations in flight at once: the GPU worker's slots. */
  slots: number;
  /** Prefix of the stored trajectory ids, so the loop's rows never collide with Ratchet's. */
  storedAs: string;
  /**
   * Who waits for a free slot: each `turn`, first come first served (AReaL's loop: every trajectory's first turn
   * is queued before any second one, so all run at once and finish together), or each `trajectory`, which keeps
   * its slot from its first turn to its last, as Ratchet's GPU worker keeps a returning turn's slot: a slot runs
   * one trajectory at a time, so a fixed batch ends with a tail of trajectories part-way through.
   */
  schedule: 'turn' | 'trajectory';
}

/**
 * The design Ratchet replaces: every trajectory as one async function in one process, no Temporal — tokenize,
 * generate over HTTP, verify, feedback, pack, store, with the same domain code Ratchet's activities run. It
 * sends the same request ids as Ratchet's first attempts, so a per-request-seeded policy answers both alike.
 */
export async function runInProcessLoop(deps: InProcessLoopDeps, requests: readonly TrajectoryRequest[]): Promise<{ turns: number }> {
  const slots = new Slots(deps.slots);
  const turns = await Promise.all(
    requests.map((request) =>
      deps.schedule === 'trajectory'
        ? slots.run(() => runTrajectory(deps, (work) => work(), request))
        : runTrajectory(deps, (work) => slots.run(work), request),
    ),
  );
  return { turns: turns.reduce((sum, n) => sum + n, 0) };
}

async function runTrajectory(
  deps: InProcessLoopDeps,
  inSlot: <T>(work: () => Promise<T>) => Promise<T>,
  request: TrajectoryRequest,
): Promise<number> {
  const options = resolveRolloutOptions(request.options);
  const birthTime = Date.now();
  const prompt = promptIds(deps.tokenizer, request.problem);
  const context = [...prompt];
  const records: TurnRecord[] = [];
  const texts: StoredTurn[] = [];
  let endReason: EndReason = 'turns';
  for (let turn = 0; turn < options.turns; turn++) {
    const contextLen = context.length;
    const output = { ids: [] as number[], logprobs: [] as number[] };
    const end = await inSlot(() =>
      deps.backend.generate(
        { inputIds: context, maxNewTokens: options.maxNewTokens, sampling: samplingOf(options), requestId: `${request.trajectoryId}/${turn}/1` },
        (chunk) => {
          output.ids.push(...chunk.ids);
          output.logprobs.push(...chunk.logprobs);
        },
      ),
    );
    const finishReason: FinishReason = end.finishReason;
    const answerText = deps.tokenizer.decodeText(output.ids);
    const verdict = await deps.verifier.verify(request.gold, answerText);
    const feedback = feedbackTokens(deps.tokenizer, verdict.equal, !stoppedWithoutEos(finishReason));
    const versions = output.ids.map(() => 0);
    records.push({
      turn,
      contextLen,
      outputLen: output.ids.length,
      finishReason,
      versionStart: 0,
      versionEnd: 0,
      verdict: verdict.status,
      success: verdict.equal,
      feedbackLen: feedback.ids.length,
    });
    texts.push({
      turn,
      contextLen,
      outputIds: output.ids,
      outputLogprobs: output.logprobs,
      outputVersions: versions,
      feedbackIds: feedback.ids,
      answerText,
      extractedAnswer: verdict.predicted,
      verdict: verdict.status,
      feedbackText: feedback.text,
    });
    context.push(...output.ids, ...feedback.ids);
    if (options.earlyStop && verdict.equal) {
      endReason = 'early_stop';
      break;
    }
  }
  const packed = packTrajectory(
    prompt,
    texts.map((t, i) => ({ ...t, noEos: stoppedWithoutEos(records[i]!.finishReason) })),
    options.layout,
  );
  const rawRewards = records.map((t) => shapeReward(t.success, options.rewardBias, options.rewardScaling));
  await storeCompletedTrajectory(deps.pool, {
    trajectoryId: `${deps.storedAs}${request.trajectoryId}`,
    qid: request.qid,
    birthTime,
    layout: options.layout,
    endReason,
    promptIds: prompt,
    packed,
    turns: records,
    rewards: returnsToGo(rawRewards, options.discount),
    rawRewards,
    texts,
  });
  return records.length;
}

/** At most `size` generations at once, first come first served, as the GPU worker's slots allow. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}
