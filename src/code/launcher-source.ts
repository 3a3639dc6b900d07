import { readFileSync } from 'node:fs';

/**
 * The Python that runs one answer's tests inside its sandbox (launcher.py, beside this module; `npm run build` copies it
 * into dist/). What it does, in order, is written at the top of that file.
 */
export const LAUNCHER_SOURCE = readFileSync(new URL('./launcher.py', import.meta.url), 'utf8');
