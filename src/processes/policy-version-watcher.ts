import type pg from 'pg';
import { log } from '../logging.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import { listen } from '../store/notifications.js';
import { latestPolicyVersion, POLICY_VERSION_CHANNEL } from '../store/policy-versions.js';

/**
 * Keeps one inference server on the newest published policy version: loads each new version's weights into
 * it (interrupting in-flight requests, which resume under the new weights) and tells generation which
 * version tokens come from when the server does not say. Reacts to NOTIFY at once and polls as a fallback.
 */
export class PolicyVersionWatcher {
  private version = 0;
  private listener: { close(): Promise<void> } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private servedCheckedAt = 0;

  constructor(private readonly pool: pg.Pool, private readonly databaseUrl: string, private readonly backend: InferenceBackend, private readonly pollMs = 2_000) {}

  /** The version the server is known to serve now. */
  readonly current = (): number => this.version;

  async start(): Promise<void> {
    await this.sync();
    this.listener = await listen(this.databaseUrl, [POLICY_VERSION_CHANNEL], () => void this.sync());
    this.timer = setInterval(() => void this.sync(), this.pollMs);
  }

  /**
   * Loads the newest version if the server is behind, or again if the server lost it (restarted on its start-up
   * weights, it reports another tag); calls are serialised so versions apply in order.
   */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      const latest = await latestPolicyVersion(this.pool).catch(() => undefined);
      if (!latest || latest.version < this.version) return;
      if (latest.version === this.version && !(await this.serverLostVersion())) return;
      await this.backend.updateWeights(latest.version, latest.weightsPath ?? undefined);
      this.version = latest.version;
    }).catch(() => undefined); // retried at the next poll
    return this.syncing;
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
    if (lost) log.warn({ server: this.backend.url, served, version: this.version }, 'inference server no longer holds the current policy version (restarted?): loading it again');
    return lost;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.listener?.close();
    await this.syncing;
  }
}
