// bench:overhead for an earlier release and for this checkout, in one run, taking turns:
// `npm run bench:overhead-against -- --baseline f9ea95c [--rounds 2] [--bench='<bench:overhead flags>']`.
// The baseline is checked out once into a worktree beside the temp folder (its own `npm ci` and build; it shares
// this checkout's `.ratchet` tools: the Temporal CLI and the tokenizer), then the two take turns, so that a busy
// machine slows both alike. Prints each process's CPU per trajectory, events per trajectory and, for the decode
// phase, the wall-time ratio against the in-process loop; the JSON of every pass goes to --json.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);
const { values: flags } = parseArgs({
  options: {
    baseline: { type: 'string', default: 'f9ea95c' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'string' },
    // bench:overhead's own flags, as one string (with =, as it starts with a dash: --bench='--phases instant,decode').
    bench: { type: 'string', default: '' },
  },
});
const benchFlags = flags.bench.split(' ').filter(Boolean);
const here = path.resolve(import.meta.dirname, '..');

async function baselineCheckout(ref: string): Promise<string> {
  const { stdout } = await run('git', ['rev-parse', '--short', ref], { cwd: here });
  const dir = path.join(os.tmpdir(), `ratchet-baseline-${stdout.trim()}`);
  if (!existsSync(path.join(dir, 'dist'))) {
    if (!existsSync(dir)) await run('git', ['worktree', 'add', '--detach', dir, ref], { cwd: here });
    console.error(`baseline ${ref}: npm ci and build in ${dir}`);
    await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 << 20 });
    await run('npm', ['run', 'build'], { cwd: dir, maxBuffer: 64 << 20 });
  }
  if (!existsSync(path.join(dir, '.ratchet'))) await symlink(path.join(here, '.ratchet'), path.join(dir, '.ratchet'));
  return dir;
}

/** One `npm run bench:overhead` in `cwd`; its JSON objects (one per phase) from stdout. */
function benchPass(cwd: string): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'bench:overhead', '--', ...benchFlags], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench:overhead in ${cwd} exited with ${code}`));
      // Each phase prints one pretty-printed JSON object; anything else on stdout (the build's) is skipped.
      resolve([...out.matchAll(/^\{\n[\s\S]*?\n\}$/gm)].map((m) => JSON.parse(m[0]) as Record<string, unknown>));
    });
  });
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
}

const baselineDir = await baselineCheckout(flags.baseline);
const rows: { code: string; round: number; load: string; result: Record<string, unknown> }[] = [];
for (let round = 1; round <= Number(flags.rounds); round++) {
  for (const [code, cwd] of [
    [`baseline ${flags.baseline}`, baselineDir],
    ['this checkout', here],
  ] as const) {
    const load = loadAverage();
    for (const result of await benchPass(cwd)) rows.push({ code, round, load, result });
  }
}
if (flags.json) await writeFile(flags.json, JSON.stringify(rows, null, 2));

console.log('\ncode | round | phase | load before | CPU ms/traj: cpu worker / gpu worker / Temporal / Postgres = sum | events | decode ÷ loop');
for (const { code, round, load, result } of rows) {
  const ms = result.cpuMsPerTrajectory as Record<string, number>;
  const parts = [ms.cpuWorker ?? 0, ms.gpuWorker ?? 0, (ms.temporalServer ?? 0) + (ms.temporalPostgres ?? 0), ms.postgres ?? 0];
  const sum = parts.reduce((a, b) => a + b, 0);
  console.log(
    [
      code,
      round,
      result.phase,
      load,
      `${parts.map((n) => n.toFixed(1)).join(' / ')} = ${sum.toFixed(1)}`,
      result.historyEventsPerTrajectory ?? '',
      result.overheadRatio ?? '',
    ].join(' | '),
  );
}
