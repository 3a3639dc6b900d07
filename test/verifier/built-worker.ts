import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const worker = `${root}dist/verifier/check-worker.js`;
const sources = `${root}src/verifier/`;

/**
 * The pool runs the compiled worker (dist/verifier/check-worker.js) even under vitest; compile
 * the project when that file is missing or older than the verifier's sources. tsc still emits
 * when another module has type errors, so only the worker's presence is checked.
 */
export function ensureWorkerBuilt(): void {
  const newestSource = Math.max(...readdirSync(sources).map((f) => statSync(`${sources}${f}`).mtimeMs));
  if (existsSync(worker) && statSync(worker).mtimeMs >= newestSource) return;
  const tsc = `${root}node_modules/typescript/bin/tsc`;
  spawnSync(process.execPath, [tsc, '-p', `${root}tsconfig.json`], { stdio: 'ignore' });
  if (!existsSync(worker)) throw new Error(`could not build ${worker}`);
}
