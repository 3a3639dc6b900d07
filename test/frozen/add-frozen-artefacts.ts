// Records the checksum of every frozen artefact not yet in test/frozen/frozen-artefacts.json (a new migration,
// release folder or replay history): `npx vite-node test/frozen/add-frozen-artefacts.ts`. It never changes or
// removes an entry; removing one is part of dropping a release (docs/releases.md), done by hand.
import { writeFileSync } from 'node:fs';
import { currentArtefacts, MANIFEST, readManifest } from './frozen-artefacts.js';

const recorded = (() => {
  try {
    return readManifest();
  } catch {
    return {};
  }
})();
const added: string[] = [];
const artefacts: Record<string, string> = { ...recorded };
for (const [name, hash] of currentArtefacts()) {
  if (!(name in artefacts)) {
    artefacts[name] = hash;
    added.push(name);
  }
}
const sorted = Object.fromEntries(Object.entries(artefacts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(
  MANIFEST,
  `${JSON.stringify({ note: 'sha256 of every frozen artefact: never edit one, add a new migration, release folder or replay history (docs/releases.md)', artefacts: sorted }, null, 2)}\n`,
);
process.stdout.write(added.length === 0 ? 'nothing new\n' : `added ${added.length}:\n${added.map((name) => `  ${name}\n`).join('')}`);
