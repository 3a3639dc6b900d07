import { freePort } from '../../src/stack/free-port.js';
import { startScratchStack, type ScratchStack } from '../../src/stack/scratch-stack.js';
import { startTemporalDevServer } from '../../src/stack/temporal-dev-server.js';

/** The real parts the soak runs on, started by this process (so it holds their PIDs and stops them). */
export type SoakStack = ScratchStack;

/**
 * A scratch stack (src/stack/scratch-stack.ts): a headless Temporal dev server and a project-local Postgres in a
 * throw-away folder, each on a free loopback port, so the soak never touches a developer's `ratchet dev` state.
 * `stateDir` is where the Temporal CLI is found.
 */
export function startSoakStack(stateDir: string): Promise<SoakStack> {
  return startScratchStack({
    prefix: 'ratchet-soak-',
    poolMax: 8,
    startTemporal: async () => startTemporalDevServer({ stateDir, port: await freePort(), headless: true }),
  });
}
