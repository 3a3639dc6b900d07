/**
 * Vitest's `expect` outside a Vitest run: the demo checks its rows with the test suite's own seed invariants
 * (scripts/support/seed-invariants.ts imports `expect` from 'vitest', which needs a test worker's state).
 * scripts/demo-train/vite.config.ts points 'vitest' here; the matchers are Vitest's, from @vitest/expect.
 */
import * as chai from 'chai';
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

export const expect = chai.expect as unknown as typeof import('vitest').expect;
