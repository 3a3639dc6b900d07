import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Metrics only a worker process can count (not derivable from Postgres or the SDK). Generation and verification
 * latency need none: the SDK runtime's exporter has them per activity type (temporal_activity_execution_latency
 * {activity_type="generate"}, temporal_local_activity_execution_latency{activity_type="environmentStep"}).
 */
export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry, prefix: 'ratchet_' });

const registers = [processRegistry];
export const processMetrics = {
  /** Incremented by the generate activity at each heartbeat it sends. */
  heartbeats: new Counter({ name: 'ratchet_generation_heartbeats_total', help: 'Heartbeats sent by generate attempts', registers }),
  /** Incremented by the generate activity when an attempt resumes from a stored checkpoint instead of starting over. */
  checkpointResumes: new Counter({
    name: 'ratchet_checkpoint_resumes_total',
    help: 'Generate attempts that resumed from a stored checkpoint',
    registers,
  }),
  /**
   * Incremented by the generate activity as tokens arrive. Set beside the server's own count, it tells tokens the
   * server generated but never delivered (a starved server runs ahead of its stream) from tokens this worker lost.
   */
  tokensReceived: new Counter({
    name: 'ratchet_policy_tokens_received_total',
    help: "Output tokens the inference server streamed to this worker's generate attempts",
    registers,
  }),
  /**
   * Policy versions this worker loaded into its server, by verdict (src/processes/policy-version-watcher.ts): proven
   * (the probe matched the publisher's reference), unproven (served without a proof), refused (never served here).
   */
  weightLoads: new Counter({
    name: 'ratchet_weight_loads_total',
    help: "Policy versions loaded into this worker's inference server, by verdict",
    labelNames: ['verdict'],
    registers,
  }),
  /** The version this worker's server serves now (its tokens' tag); -1 while it serves weights no version vouches for. */
  servedVersion: new Gauge({
    name: 'ratchet_served_policy_version',
    help: 'Policy version the inference server serves now (-1: none Ratchet can vouch for)',
    labelNames: ['server'],
    registers,
  }),
};
