import { benchCode } from './verify/code-checks.js';
import type { IsolationTool } from '../src/code/sandbox-config.js';

/**
 * The code judge's throughput alone (the code part of `npm run bench:verify`, without the math sets):
 * `vite-node bench/code-verify.ts [bwrap] [unshare] [--checks N]`, each tool in turn (default: both), a correct
 * 5-test stdin answer one at a time, then with the pool full; the machine's load beside each figure.
 */
const args = process.argv.slice(2);
const at = args.indexOf('--checks');
const checks = at >= 0 ? Number(args[at + 1]) : 120;
const tools = args.filter((arg): arg is IsolationTool => arg === 'bwrap' || arg === 'unshare');
for (const tool of tools.length > 0 ? tools : (['bwrap', 'unshare'] as const)) await benchCode(Math.ceil(checks / 2), checks, tool);
