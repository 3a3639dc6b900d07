// Freezes the compiled workflow code of this release for the deploy test of the next one:
// `npm run build && npx vite-node scripts/dev/freeze-workflow-release.ts r<N>-<name>` copies dist/workflows/index.js
// and every module it imports (relative imports, followed transitively) into test/deploy/workflow-releases/<folder>,
// keeping their paths under dist/. Then record them with `npx vite-node test/frozen/add-frozen-artefacts.ts`.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const [folder] = process.argv.slice(2);
if (!folder || !/^r\d+-[a-z0-9-]+$/.test(folder)) throw new Error('usage: freeze-workflow-release.ts r<N>-<name>');
const root = path.resolve(import.meta.dirname, '../..');
const dist = path.join(root, 'dist');
const target = path.join(root, 'test/deploy/workflow-releases', folder);
if (existsSync(target)) throw new Error(`${target} exists: a frozen release is never re-made`);

const seen = new Set<string>();
const pending = [path.join(dist, 'workflows/index.js')];
while (pending.length > 0) {
  const file = pending.pop()!;
  if (seen.has(file)) continue;
  seen.add(file);
  const source = await readFile(file, 'utf8');
  for (const [, specifier] of source.matchAll(/(?:from|import\()\s*(?:\/\*[^*]*\*\/\s*)?'(\.{1,2}\/[^']+)'/g)) {
    pending.push(path.resolve(path.dirname(file), specifier!));
  }
}
for (const file of [...seen].sort()) {
  const copy = path.join(target, path.relative(dist, file));
  await mkdir(path.dirname(copy), { recursive: true });
  await copyFile(file, copy);
  console.log(path.relative(root, copy));
}
