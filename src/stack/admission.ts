import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { AdmissionController } from '../processes/admission-controller.js';
import type { Teardown } from './teardown.js';

export interface ControllerOptions {
  pool: pg.Pool;
  client: Client;
  databaseUrl: string;
  pollMs?: number;
  sweepMs?: number;
}

/** Starts an admission controller in this process; `teardown` stops it. Returns its stop, for a caller that stops it sooner. */
export async function startAdmission(options: ControllerOptions, teardown: Teardown): Promise<() => Promise<void>> {
  const controller = new AdmissionController({
    pool: options.pool,
    temporal: options.client,
    databaseUrl: options.databaseUrl,
    pollMs: options.pollMs,
    sweepMs: options.sweepMs,
  });
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= controller.stop());
  teardown.add('admission controller', stop);
  await controller.start();
  return stop;
}
