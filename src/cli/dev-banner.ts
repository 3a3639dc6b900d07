import { redactUrl } from '../secrets/redact-url.js';

export interface DevEndpoints {
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  databaseUrl: string;
  /** True when this process started the Postgres (its password is in the state folder). */
  embeddedPostgres: boolean;
  policyUrl: string;
  simulated: boolean;
}

/**
 * What `ratchet dev` prints: where each part is, with every URL's password hidden (an external DATABASE_URL
 * included). Another terminal needs no password: in this folder the embedded parts are found and shared, and an
 * external DATABASE_URL is already in that terminal's environment.
 */
export function devBanner(at: DevEndpoints, dataset: string, stateDir: string): string {
  return [
    `Temporal      ${at.temporalAddress}${at.temporalUiUrl ? `  (UI ${at.temporalUiUrl})` : ''}`,
    `Postgres      ${redactUrl(at.databaseUrl)}${at.embeddedPostgres ? `  (password in ${stateDir}/postgres-password)` : ''}`,
    `policy        ${redactUrl(at.policyUrl)}${at.simulated ? ' (simulated)' : ''}`,
    'Submit from another terminal in this folder with:',
    `  npx ratchet run --submit-only --dataset ${dataset}`,
    'or train against it (an admission controller runs here):',
    `  npx ratchet submit --run r1 --dataset ${dataset} --samples 4 --batch-size 2 --max-head-offpolicyness 1`,
    '  npx ratchet consume --run r1 --batch-size 2 --format arrow --out batch.arrow   # then: npx ratchet ack <batchId>',
    'Serve a Python environment to it (and point a Python trainer at it) with:',
    `  TEMPORAL_ADDRESS=${at.temporalAddress} ratchet-env serve path/to/env.py:MyEnvironment`,
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}
