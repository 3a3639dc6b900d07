import { describe, expect, it } from 'vitest';
import { currentArtefacts, readManifest } from './frozen-artefacts.js';

// Shipped migrations (the batch protocol among them), the frozen release-2 loop, the frozen release folders and
// the replay histories are never edited: a change is a new migration, release folder or history
// (docs/releases.md). test/frozen/frozen-artefacts.json holds their checksums.
const NEVER_EDIT = 'frozen artefacts are never edited: add a new migration, release folder or replay history instead (docs/releases.md)';

describe('frozen artefacts', () => {
  const recorded = readManifest();
  const current = currentArtefacts();

  it('are as they shipped', () => {
    const changed = Object.entries(recorded)
      .filter(([name, hash]) => current.has(name) && current.get(name) !== hash)
      .map(([name]) => name);
    expect(changed, `changed: ${changed.join(', ')}; ${NEVER_EDIT}`).toEqual([]);
  });

  it('are all still there (one goes only when its release is dropped, with its manifest entry)', () => {
    const missing = Object.keys(recorded).filter((name) => !current.has(name));
    expect(
      missing,
      `missing: ${missing.join(', ')}; ${NEVER_EDIT}. Dropping a release removes its entries by hand, per src/workflows/releases/drop-list.ts`,
    ).toEqual([]);
  });

  it('each have a recorded checksum', () => {
    const unrecorded = [...current.keys()].filter((name) => !(name in recorded));
    expect(
      unrecorded,
      `not in test/frozen/frozen-artefacts.json: ${unrecorded.join(', ')}; record them with npx vite-node test/frozen/add-frozen-artefacts.ts`,
    ).toEqual([]);
  });
});
