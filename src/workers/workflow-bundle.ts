import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleOption } from '@temporalio/worker';

/** The workflow entry point: compiled JS under dist/, or the TypeScript source when run from src/ (tests). */
export function workflowsPath(): string {
  const compiled = fileURLToPath(new URL('../workflows/index.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
}

/** Where `npm run build` writes the bundle (dist/workflow-bundle.js), and what it was built from. */
const BUNDLE_FILE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
const BUNDLE_INPUTS = fileURLToPath(new URL('../workflow-bundle.inputs', import.meta.url));

let bundle: Promise<WorkflowBundleOption> | undefined;

/**
 * The workflow code every worker in the process shares: the bundle `npm run build` wrote, when it was built from the
 * compiled code now in dist/; otherwise (run from src/, or dist/ compiled again since) bundled here, once per process.
 */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  bundle ??= (async () => {
    const entry = workflowsPath();
    if (entry.endsWith('.js') && (await readFile(BUNDLE_INPUTS, 'utf8').catch(() => undefined)) === (await compiledInputs()))
      return { codePath: BUNDLE_FILE };
    return bundleWorkflowCode({ workflowsPath: entry, logger: new DefaultLogger('WARN') });
  })();
  return bundle;
}

/** Bundles the compiled workflows into dist/workflow-bundle.js (the build's last step), noting what it was built from. */
export async function writeWorkflowBundle(): Promise<string> {
  const entry = workflowsPath();
  if (!entry.endsWith('.js')) throw new Error(`no compiled workflows at ${entry}: run tsc first`);
  const { code } = await bundleWorkflowCode({ workflowsPath: entry, logger: new DefaultLogger('WARN') });
  await writeFile(BUNDLE_FILE, code);
  await writeFile(BUNDLE_INPUTS, await compiledInputs());
  return BUNDLE_FILE;
}

/**
 * A digest of every compiled module in dist/ and of the workflow SDK's version: the bundle is current while it
 * is unchanged. All modules, not only those the workflows import: a few milliseconds, and nothing is missed.
 */
async function compiledInputs(): Promise<string> {
  const dist = path.dirname(BUNDLE_FILE);
  const files = (await readdir(dist, { recursive: true })).filter((file) => file.endsWith('.js') && path.join(dist, file) !== BUNDLE_FILE).sort();
  const hash = createHash('sha256');
  const sdk = createRequire(import.meta.url)('@temporalio/workflow/package.json') as { version: string };
  hash.update(`@temporalio/workflow ${sdk.version}\n`);
  for (const file of files) hash.update(`${file}\n`).update(await readFile(path.join(dist, file)));
  return `${hash.digest('hex')}\n`;
}
