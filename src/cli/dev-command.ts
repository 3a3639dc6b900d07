import { Command, Option } from 'commander';
import { loadConfig } from '../config.js';
import { PortTaken } from '../stack/free-port.js';
import { startLocalRuntime } from '../stack/local-runtime.js';
import { SAMPLE_DATASET } from './demo-command.js';
import { devBanner } from './dev-banner.js';
import { loadProblems } from './shared-options.js';
import { startRatchetUi } from '../ui/server.js';
import { uiPort } from '../ui/ui-port.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { startMetricsFromEnvironment } from '../metrics/metrics-server.js';
import { nextStopSignal, settlesWithin, signalExitStatus } from './interrupt.js';

/**
 * How long `ratchet dev` may take to stop after SIGINT or SIGTERM: the workers' own bound (5 s, src/workers/shutdown-bound.ts)
 * and the servers' stops fit well inside it. Past it the process exits anyway, and its Temporal and Postgres die
 * with it (src/stack/child-process.ts, spawnTied). A second signal ends it at once.
 */
export const DEV_STOP_BOUND_MS = 20_000;

export function devCommand(): Command {
  return new Command('dev')
    .description('run the embedded stack (Temporal with UI, Postgres), both workers and the simulated policy until Ctrl-C')
    .option('--dataset <file>', 'problems the simulated policy knows the answers to', SAMPLE_DATASET)
    .addOption(
      new Option(
        '--temporal <server>',
        'the Temporal to start: the dev server (SQLite, with a UI), or the server users deploy (Postgres, SQL visibility; built once from its Go module by `ratchet setup --temporal-server`)',
      )
        .choices(['dev', 'server'])
        .default('dev'),
    )
    .action(async (flags: { dataset: string; temporal: 'dev' | 'server' }) => {
      // The UI starts on a known port, so the workflows' details can link to it from the start.
      const config = { ...loadConfig() };
      config.uiUrl ??= `http://127.0.0.1:${uiPort()}`;
      const runtime = await startLocalRuntime(config, {
        problems: await loadProblems(flags.dataset),
        workers: true,
        headless: false,
        temporalServer: flags.temporal,
      });
      // Everything from here on is stopped with the runtime: a UI port that is taken must not orphan Temporal and Postgres.
      try {
        const ui = await startRatchetUi({
          pool: runtime.pool,
          tokenizer: await loadModelTokenizer(config.tokenizerDir),
          port: uiPort(),
          temporal: { client: runtime.client, namespace: config.temporal.namespace, uiUrl: runtime.stack.temporalUiUrl },
        }).catch((error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
          throw new PortTaken(`the Ratchet UI's port ${uiPort()} is taken by another process; set RATCHET_UI_PORT to a free port`, { cause: error });
        });
        runtime.teardown.add('Ratchet UI', () => ui.close());
        const metrics = await startMetricsFromEnvironment(runtime.pool);
        runtime.teardown.add('metrics', () => metrics?.close());
        process.stdout.write(`Ratchet UI  ${ui.url}\n${metrics ? `metrics       ${metrics.url}\n` : ''}`);
        process.stdout.write(
          devBanner(
            {
              ...runtime.stack,
              embeddedPostgres: runtime.stack.embedded.postgres,
              policyUrl: runtime.policyUrl,
              simulated: runtime.simulated,
            },
            flags.dataset,
            config.stateDir,
          ),
        );
        const signal = await nextStopSignal();
        process.stderr.write(`ratchet dev: ${signal}: stopping (a second one stops at once)\n`);
        if (!(await settlesWithin(runtime.stop(), DEV_STOP_BOUND_MS))) {
          process.stderr.write(`ratchet dev: not stopped within ${DEV_STOP_BOUND_MS / 1000} s; exiting, its servers with it\n`);
          process.exit(signalExitStatus(signal));
        }
        // Stopped. A step that ignored its cancellation still holds the event loop (the workers gave up on it after
        // their shutdown bound): waiting for it to drain kept `ratchet dev` alive for as long as the step hung.
        process.exit(0);
      } finally {
        await runtime.stop();
      }
    });
}
