import { describe, expect, it } from 'vitest';
import { devBanner } from '../../src/cli/dev-banner.js';

describe('the ratchet dev banner', () => {
  it("tells ratchet-env serve where the stack's Temporal is (issue 36)", () => {
    const banner = devBanner(
      {
        temporalAddress: '127.0.0.1:7300',
        temporalUiUrl: undefined,
        databaseUrl: 'postgres://ratchet:secret@127.0.0.1:5433/ratchet',
        embeddedPostgres: true,
        policyUrl: 'http://127.0.0.1:30000',
        simulated: true,
      },
      'data/sample.jsonl',
      '.ratchet',
    );
    expect(banner).toContain('TEMPORAL_ADDRESS=127.0.0.1:7300 ratchet-env serve ');
    expect(banner).not.toContain('secret');
  });
});
