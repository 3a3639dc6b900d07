import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Metrics only a worker process can count (not derivable from Postgres). Activities increment them; they are
 * exported by the process's metrics server when RATCHET_METRICS_ADDRESS is set, and cost nothing otherwise.
 */
export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry, prefix: 'ratchet_process_' });

const registers = [processRegistry];
export const processMetrics = {
  generationSeconds: new Histogram({ name: 'ratchet_generation_seconds', help: 'Time of one generate attempt (one turn of one trajectory)', buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300], registers }),
  verificationSeconds: new Histogram({ name: 'ratchet_verification_seconds', help: 'Time of one verifier check', buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 3], registers }),
  heartbeats: new Counter({ name: 'ratchet_generation_heartbeats_total', help: 'Heartbeats sent by generate attempts', registers }),
  checkpointResumes: new Counter({ name: 'ratchet_checkpoint_resumes_total', help: 'Generate attempts that resumed from a stored checkpoint instead of starting over', registers }),
};
