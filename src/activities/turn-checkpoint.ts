import type pg from 'pg';
import type { PartialOutput } from '../policy/resumable-generation.js';
import { appendTurnCheckpoint, CheckpointSuperseded, claimTurnCheckpoint, type TurnCheckpointKey } from '../store/write/turn-checkpoints.js';
import { readHeartbeat } from './partial-output.js';

/**
 * The tokens a generate attempt starts from. The first attempt has no predecessor, so it skips the database;
 * a retry claims the checkpoint (fencing off the attempt it replaces, which may still be running) and resumes
 * from what it holds, or from the tokens an earlier release's heartbeat carried.
 */
export async function resumeTurn(
  pool: pg.Pool,
  key: TurnCheckpointKey,
  heartbeatDetails: unknown,
): Promise<{ resumed: PartialOutput; claimed: boolean }> {
  if (key.attempt <= 1 && heartbeatDetails === undefined) return { resumed: { ids: [], logprobs: [], versions: [] }, claimed: false };
  return { resumed: await claimTurnCheckpoint(pool, key, readHeartbeat(heartbeatDetails).carried), claimed: true };
}

/**
 * Appends a generating turn's new tokens to its checkpoint, one write at a time: a request while a write is in
 * flight is folded into the next write, which takes every token up to then, so streaming never waits on
 * Postgres. `onCommitted` runs after each commit (the heartbeat, so it never points past the checkpoint).
 * When the checkpoint is lost to a newer attempt, `signal` aborts, so generation stops at once; it also aborts,
 * with the same reason, when `cancelled` (the activity's cancellation) does: one signal for both, where
 * `AbortSignal.any` made a third on every turn.
 */
export class TurnCheckpointWriter {
  private readonly aborter = new AbortController();
  private output?: PartialOutput;
  private writing?: Promise<void>;
  private again = false;
  private failure?: unknown;
  /** Checkpoint writes committed by this attempt, and the token bytes they carried. */
  writes = 0;
  bytesWritten = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly key: TurnCheckpointKey,
    private committed: number,
    private readonly onCommitted: (tokens: number) => void,
    cancelled?: AbortSignal,
  ) {
    if (cancelled?.aborted) this.aborter.abort(cancelled.reason);
    else cancelled?.addEventListener('abort', () => this.aborter.abort(cancelled.reason), { once: true });
  }

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** Asks for every token of `output` (which only grows) to be checkpointed. */
  offer(output: PartialOutput): void {
    this.output = output;
    if (this.failure !== undefined) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    this.writing = this.writeUntilCaughtUp().finally(() => {
      this.writing = undefined;
    });
  }

  /** Waits for the write in flight; throws what stopped the checkpoint, if anything did. */
  async settle(): Promise<void> {
    await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  /** The reason the checkpoint stopped (it then also aborted `signal`), if it did. */
  get stopped(): unknown {
    return this.failure;
  }

  private async writeUntilCaughtUp(): Promise<void> {
    try {
      do {
        this.again = false;
        const output = this.output!;
        const upto = output.ids.length;
        if (upto <= this.committed) continue;
        const piece = {
          ids: output.ids.slice(this.committed, upto),
          logprobs: output.logprobs.slice(this.committed, upto),
          versions: output.versions.slice(this.committed, upto),
        };
        if (!(await appendTurnCheckpoint(this.pool, this.key, this.committed, piece))) throw new CheckpointSuperseded(this.key);
        this.writes += 1;
        this.bytesWritten += piece.ids.length * 12;
        this.committed = upto;
        this.onCommitted(upto);
      } while (this.again);
    } catch (error) {
      this.failure = error;
      this.aborter.abort(error);
    }
  }
}
