import { once } from 'node:events';
import { Command } from 'commander';
import { AdmissionController } from '../processes/admission-controller.js';
import { log } from '../logging.js';
import { positiveInt } from './shared-options.js';
import { withRolloutClient } from './with-rollout-client.js';

export function controllerCommand(): Command {
  return new Command('controller')
    .description("admit waiting groups as each run's staleness bound allows, until Ctrl-C (safe to run several, safe to kill)")
    .option('--poll-ms <ms>', 'fallback poll interval (NOTIFY wakes it sooner)', positiveInt, 1000)
    .action(async (flags: { pollMs: number }) => {
      await withRolloutClient(async (client, databaseUrl) => {
        const controller = new AdmissionController({ pool: client.pool, temporal: client.temporal, databaseUrl, pollMs: flags.pollMs });
        await controller.start();
        log.info('admission controller running');
        await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
        await controller.stop();
        log.info({ admitted: controller.admitted }, 'admission controller stopped');
      });
    });
}
