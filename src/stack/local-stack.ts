import path from 'node:path';
import type { RatchetConfig } from '../config.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { isListening } from './free-port.js';
import { Connection } from '@temporalio/client';
import { Teardown } from './teardown.js';
import { startEmbeddedTemporal, type EmbeddedTemporal } from './embedded-temporal.js';

export type { EmbeddedTemporal };

/** Where Temporal and Postgres are, whether configured or started here, and how to stop what was started. */
export interface Stack {
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  databaseUrl: string;
  /** True for each part this process started (and will stop). */
  embedded: { temporal: boolean; postgres: boolean };
  stop(): Promise<void>;
}

/**
 * Uses TEMPORAL_ADDRESS and DATABASE_URL when set; otherwise starts `temporal server start-dev` (SQLite file in
 * the state folder, UI on its port), or with `temporalServer: 'server'` the Temporal server users deploy (on a
 * Postgres of its own in the state folder), and a project-local Postgres. A part already running on its embedded
 * port (another `ratchet dev`, say) is reused rather than started twice.
 */
export async function startStack(
  config: RatchetConfig,
  options: { temporal?: boolean; headless?: boolean; temporalServer?: EmbeddedTemporal; log?: (line: string) => void } = {},
): Promise<Stack> {
  const teardown = new Teardown();
  return teardown.guard(async () => {
    let databaseUrl = config.databaseUrl;
    const embeddedPostgres = !databaseUrl;
    if (!databaseUrl) {
      const postgres = await startEmbeddedPostgres(config.stateDir, config.ports.postgres);
      teardown.add('Postgres', postgres.stop);
      databaseUrl = postgres.url;
    }
    let temporalAddress = config.temporal.address ?? `127.0.0.1:${config.ports.temporal}`;
    let temporalUiUrl: string | undefined = config.temporal.address ? undefined : `http://127.0.0.1:${config.ports.temporalUi}`;
    const embeddedTemporal = !config.temporal.address && options.temporal !== false;
    if (embeddedTemporal && (await isListening(config.ports.temporal))) {
      await expectTemporalAt(temporalAddress);
    } else if (embeddedTemporal) {
      // The real server is built once into the state folder (`ratchet setup --temporal-server`); its own Postgres keeps its data there too.
      const server = await startEmbeddedTemporal(options.temporalServer ?? 'dev', {
        stateDir: config.stateDir,
        port: config.ports.temporal,
        uiPort: config.ports.temporalUi,
        headless: options.headless,
        dbFile: path.join(config.stateDir, 'temporal.sqlite'),
        log: options.log,
      });
      teardown.add('Temporal', server.stop);
      temporalAddress = server.address;
      temporalUiUrl = server.kind === 'dev' ? server.uiUrl : undefined;
    }
    return {
      temporalAddress,
      temporalUiUrl,
      databaseUrl,
      embedded: { temporal: embeddedTemporal, postgres: embeddedPostgres },
      stop: () => teardown.run(),
    };
  });
}

/** Something already listens on the embedded Temporal port: share it only if it speaks Temporal. */
async function expectTemporalAt(address: string): Promise<void> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 3_000 });
    await connection.workflowService.getSystemInfo({});
    await connection.close();
  } catch (error) {
    throw new Error(
      `${address} is taken by something that is not a Temporal server (${(error as Error).message}); set RATCHET_TEMPORAL_PORT to a free port or TEMPORAL_ADDRESS to a server you run`,
    );
  }
}
