import { readFileSync } from 'node:fs';

/**
 * Python that the launcher runs first under the `unshare` floor, where no bubblewrap builds the sandbox's view
 * (floor_confinement.py, beside this module; `npm run build` copies it into dist/): `confine_floor` builds the
 * sandbox's root, pivots into it and drops every capability.
 */
export const FLOOR_CONFINEMENT_SOURCE = readFileSync(new URL('./floor_confinement.py', import.meta.url), 'utf8');
