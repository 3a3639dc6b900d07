import type pg from 'pg';
import { log } from '../logging.js';
import { processMetrics } from '../metrics/process-metrics.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { PolicyUnavailable } from '../policy/policy-errors.js';
import { CheckpointRefused, judgeProbe, PROOF_BOUNDS, type ProofFigures, WeightsRefused } from '../policy/weights-proof.js';
import { listen } from '../store/notifications.js';
import { latestPolicyVersion, POLICY_VERSION_CHANNEL, type PolicyVersion } from '../store/write/policy-versions.js';
import { recordLoaded, recordLoadRequested, recordServing, recordVerdict } from '../store/write/served-weights.js';

/**
 * Whether a version with new weights but no probe reference may be served (`optional`, recorded `unproven`) or is
 * refused (`required`, the default: a tag nobody can vouch for is how a hybrid gets trained on). RATCHET_WEIGHT_PROOF.
 */
export type WeightProofPolicy = 'required' | 'optional';

export interface PolicyVersionWatcherOptions {
  pollMs?: number;
  weightProof?: WeightProofPolicy;
  /** Parity bounds of the probe (src/policy/weights-proof.ts). */
  bounds?: { meanAbsDelta: number; maxAbsDelta: number };
}

type Proof = { verdict: 'proven'; figures: ProofFigures } | { verdict: 'unproven'; why: string };

/**
 * Keeps one inference server on the newest published policy version, and never lets a token carry a version the
 * server is not proven to serve (issue 33). For each new version: the gate closes (generation waits, see `current`),
 * the server loads the weights (its in-flight requests end with `abort` and their tokens so far keep the old tag),
 * the server scores the publisher's probe sequence and the logprobs are compared with the reference; only then does
 * the tag move and the gate open. A version that fails to load or to prove is refused on this server (typed, in the
 * ledger, counted in /metrics) and the server is put back on the version it served before and proven again; when
 * even that fails the server serves nothing under any tag: generation fails over (PolicyUnavailable) and the worker
 * stops taking turns (`usable`). Reacts to NOTIFY at once and polls as a fallback.
 */
export class PolicyVersionWatcher {
  private version = 0;
  /** The version the server was last proven (or allowed) to serve, to go back to when a newer one is refused. */
  private serving: PolicyVersion = { version: 0, weightsPath: null, reference: null };
  /** Pending while a load is under way: generation waits for it. */
  private gate: Promise<void> | undefined;
  /** Why the server holds weights no tag can vouch for; undefined while it serves `version`. */
  private unusableReason: string | undefined;
  /** Versions this server refused: not tried again until the worker restarts (a new publish moves on anyway). */
  private readonly refused = new Set<number>();
  private listener: { close(): Promise<void> } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private servedCheckedAt = 0;
  private readonly pollMs: number;
  private readonly weightProof: WeightProofPolicy;
  private readonly bounds: { meanAbsDelta: number; maxAbsDelta: number };

  constructor(
    private readonly pool: pg.Pool,
    private readonly databaseUrl: string,
    private readonly backend: InferenceBackend,
    options: PolicyVersionWatcherOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2_000;
    this.weightProof = options.weightProof ?? weightProofFromEnv();
    this.bounds = options.bounds ?? PROOF_BOUNDS;
  }

  /**
   * The version the server serves now, for tagging tokens: a number when it is settled, a promise while a load is
   * being proven (generation waits rather than tag tokens of unproven weights), a rejection (PolicyUnavailable) when
   * the server holds weights no version can vouch for.
   */
  readonly current = (): number | Promise<number> => {
    if (this.gate) return this.gate.then(() => this.current());
    if (this.unusableReason !== undefined) return Promise.reject(new PolicyUnavailable(this.backend.url, this.unusableReason));
    return this.version;
  };

  /** Whether the server serves weights a version vouches for; a worker takes no turn while it does not. */
  readonly usable = (): boolean => this.unusableReason === undefined;

  async start(): Promise<void> {
    await recordServing(this.pool, this.backend.url, 0, 'start-up weights').catch(() => undefined);
    await this.sync();
    this.listener = await listen(this.databaseUrl, [POLICY_VERSION_CHANNEL], () => void this.sync());
    this.timer = setInterval(() => void this.sync(), this.pollMs);
  }

  /**
   * Loads the newest version if the server is behind, or again if the server lost it (restarted on its start-up
   * weights, it reports another tag); calls are serialised so versions apply in order.
   */
  sync(): Promise<void> {
    this.syncing = this.syncing
      .then(async () => {
        const latest = await latestPolicyVersion(this.pool).catch(() => undefined);
        if (!latest || latest.version < this.version || this.refused.has(latest.version)) return;
        if (latest.version === this.version && this.unusableReason === undefined && !(await this.serverLostVersion())) return;
        await this.load(latest);
      })
      .catch((error: unknown) => {
        log.warn({ server: this.backend.url, err: error }, 'policy version sync failed; retried at the next poll');
      });
    return this.syncing;
  }

  /** Loads `target`, proves it, and moves the tag; on any failure refuses it and goes back to what was served. */
  private async load(target: PolicyVersion): Promise<void> {
    const opened = this.closeGate();
    try {
      await this.rememberServed(target);
      await recordLoadRequested(this.pool, this.backend.url, target.version);
      // Whether the server may hold other weights than before: not when the version was refused before its load, or
      // when the server refused the checkpoint itself (Ratchet's vLLM extension checks before it touches the model).
      let touched = false;
      try {
        const unproven = await this.withoutProof(target);
        touched = true;
        await this.backend.updateWeights(target.version, target.weightsPath ?? undefined);
        await recordLoaded(this.pool, this.backend.url, target.version);
        const proof: Proof = unproven ? { verdict: 'unproven', why: unproven } : await this.prove(target);
        this.settle(target, proof.verdict === 'proven' ? { figures: proof.figures } : { why: proof.why });
        await recordVerdict(
          this.pool,
          this.backend.url,
          target.version,
          proof.verdict,
          proof.verdict === 'proven' ? { figures: proof.figures } : { error: proof.why },
        );
        await recordServing(this.pool, this.backend.url, target.version, proof.verdict === 'proven' ? undefined : proof.why);
        processMetrics.weightLoads.inc({ verdict: proof.verdict });
      } catch (error) {
        await this.refuse(target, error, touched && !(error instanceof CheckpointRefused));
      }
    } finally {
      opened();
    }
  }

  /**
   * Decided before anything is loaded: why a version with no usable reference may be served unproven (undefined: it
   * has one), or WeightsRefused when it may not (a reload the worker would refuse anyway is never made).
   */
  private async withoutProof(target: PolicyVersion): Promise<string | undefined> {
    const refuse = (reason: string) => new WeightsRefused(target.version, this.backend.url, reason);
    if (!(await this.backend.servesWeights())) return 'the simulated policy serves no weights to prove';
    if (target.referenceInvalid) throw refuse(`its probe reference is malformed (${target.referenceInvalid})`);
    if (target.reference) return undefined;
    if (target.weightsPath === null) return 'published without weights: the server reloaded its own directory';
    if (this.weightProof === 'optional') return 'published without a probe reference (RATCHET_WEIGHT_PROOF=optional)';
    throw refuse(
      'published without a probe reference, so nothing can show the server serves it: publish with one ' +
        '(`python -m ratchet_rollouts.weights_probe DIR --out FILE`, then `ratchet policy publish --reference FILE`; or ' +
        '`publish_policy_version(..., reference=probe_reference(model))`), or set RATCHET_WEIGHT_PROOF=optional to serve it unproven',
    );
  }

  /** What the server serves after the load, against the publisher's reference. Throws WeightsRefused on a miss. */
  private async prove(target: PolicyVersion): Promise<Proof> {
    const refuse = (reason: string, figures?: ProofFigures) => new WeightsRefused(target.version, this.backend.url, reason, figures);
    if (!target.reference) throw refuse('it has no probe reference');
    const scored = await this.backend.scorePrompt(target.reference.token_ids).catch((error: unknown) => {
      // A server that cannot even score the sequence after the load (vLLM answers 400 for non-finite logprobs) is as
      // far from the published weights as it gets.
      throw new WeightsRefused(
        target.version,
        this.backend.url,
        `the server could not score the probe: ${(error as Error).message}`,
        undefined,
        'ProbeFailed',
      );
    });
    const verdict = judgeProbe(target.reference, scored, this.bounds);
    if (!verdict.proven) throw refuse(verdict.reason, verdict.figures);
    return { verdict: 'proven', figures: verdict.figures };
  }

  /**
   * The weights served now have no reference of their own (start-up weights, or a version served unproven): before
   * they are replaced, the server scores the new reference's sequence on them, so that going back to them after a
   * refusal can be proven like any version.
   */
  private async rememberServed(target: PolicyVersion): Promise<void> {
    if (this.serving.reference || !target.reference || this.unusableReason !== undefined) return;
    const scored = await this.backend.scorePrompt(target.reference.token_ids).catch(() => undefined);
    if (!scored?.slice(1).every((value) => value !== null && Number.isFinite(value))) return;
    this.serving = { ...this.serving, reference: { token_ids: target.reference.token_ids, logprobs: scored } };
  }

  private settle(target: PolicyVersion, detail: { figures: ProofFigures } | { why: string }): void {
    this.version = target.version;
    this.serving = target;
    this.unusableReason = undefined;
    processMetrics.servedVersion.set({ server: this.backend.url }, target.version);
    if ('figures' in detail) log.info({ server: this.backend.url, version: target.version, ...detail.figures }, 'policy version loaded and proven');
    else log.info({ server: this.backend.url, version: target.version, why: detail.why }, 'policy version loaded unproven');
  }

  /** The version is never served here: recorded, and the server put back on what it served before. */
  private async refuse(target: PolicyVersion, error: unknown, touched: boolean): Promise<void> {
    // A server that cannot be reached is not a verdict on the weights: the next poll tries again.
    if (!(error instanceof PolicyUnavailable)) this.refused.add(target.version);
    const errorType =
      error instanceof WeightsRefused
        ? error.kind
        : error instanceof CheckpointRefused
          ? 'CheckpointRefused'
          : error instanceof PolicyUnavailable
            ? 'PolicyUnavailable'
            : 'WeightsLoadFailed';
    const figures = error instanceof WeightsRefused ? error.figures : undefined;
    log.error({ server: this.backend.url, version: target.version, errorType, err: error }, 'policy version refused on this server');
    processMetrics.weightLoads.inc({ verdict: 'refused' });
    await recordVerdict(this.pool, this.backend.url, target.version, 'refused', {
      errorType,
      error: (error as Error)?.message ?? String(error),
      ...(figures ? { figures } : {}),
    }).catch(() => undefined);
    if (touched) await this.restore(target.version);
  }

  /**
   * Puts the server back on the version it served before, proven again (a failed load may have changed it, or not:
   * a checkpoint the server refused before loading leaves it as it was, which the probe confirms at once).
   */
  private async restore(refusedVersion: number): Promise<void> {
    const previous = this.serving;
    try {
      // A server that cannot even score the probe (non-finite logprobs) surely needs the reload.
      const untouched = previous.reference
        ? await this.backend.scorePrompt(previous.reference.token_ids).then(
            (scored) => judgeProbe(previous.reference!, scored, this.bounds).proven,
            () => false,
          )
        : false;
      if (!untouched) {
        await this.backend.updateWeights(previous.version, previous.weightsPath ?? undefined);
        if (previous.reference) await this.prove(previous);
      }
      this.unusableReason = undefined;
      processMetrics.servedVersion.set({ server: this.backend.url }, previous.version);
      await recordServing(this.pool, this.backend.url, previous.version, `version ${refusedVersion} refused; back on ${previous.version}`);
    } catch (error) {
      this.unusableReason = `version ${refusedVersion} was refused and the server could not be shown to serve version ${previous.version} again (${(error as Error).message})`;
      processMetrics.servedVersion.set({ server: this.backend.url }, -1);
      log.error(
        { server: this.backend.url, version: previous.version, err: error },
        'inference server serves weights no version vouches for: its worker takes no turn',
      );
      await recordServing(this.pool, this.backend.url, null, this.unusableReason).catch(() => undefined);
    }
  }

  private closeGate(): () => void {
    let open!: () => void;
    this.gate = new Promise((resolve) => {
      open = resolve;
    });
    return () => {
      this.gate = undefined;
      open();
    };
  }

  /**
   * Only a tag the server positively reports counts: a server that cannot be asked (down, or keeping no tag) is
   * not reloaded, since a reload aborts every in-flight request. A higher number is another worker's newer load.
   */
  private async serverLostVersion(): Promise<boolean> {
    if (this.version === 0) return false;
    // Asked at most every couple of seconds, however often versions are polled: a busy server answers slowly.
    if (Date.now() - this.servedCheckedAt < Math.max(this.pollMs, 2_000)) return false;
    this.servedCheckedAt = Date.now();
    const served = await this.backend.servedWeightVersion();
    if (served === undefined) return false;
    const lost = !/^\d+$/.test(served) || Number(served) < this.version;
    if (lost)
      log.warn(
        { server: this.backend.url, served, version: this.version },
        'inference server no longer holds the current policy version (restarted?): loading it again',
      );
    return lost;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.listener?.close();
    await this.syncing;
  }
}

function weightProofFromEnv(): WeightProofPolicy {
  const value = process.env.RATCHET_WEIGHT_PROOF ?? 'required';
  if (value !== 'required' && value !== 'optional') throw new Error(`RATCHET_WEIGHT_PROOF must be "required" or "optional", got "${value}"`);
  return value;
}
