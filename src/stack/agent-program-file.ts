import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AgentProgram } from '../agent/program-host.js';
import { problemLines, readableIssue } from '../trajectory/schema-problems.js';

export class AgentProgramFileError extends Error {
  override readonly name = 'AgentProgramFileError';
}

const programShape = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a name of letters, digits, ".", "_" and "-" (at most 64)'),
  command: z.array(z.string().min(1)).min(1),
  cwd: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

/**
 * The agent programs a CPU worker runs (`RATCHET_AGENT_PROGRAMS`: a JSON file holding a list of `{name, command, cwd?,
 * env?}`, docs/agent-programs.md). A relative `cwd` is resolved from the file's folder, which is also the default, so
 * a file beside its programs names them by their own paths. A file that does not load, or a program that is not one,
 * stops the worker with the reason: a typo must not wait until the first trajectory.
 */
export async function loadAgentProgramFile(file: string | undefined, taken: readonly string[] = []): Promise<AgentProgram[]> {
  if (file === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new AgentProgramFileError(`cannot read the agent programs in ${file} (RATCHET_AGENT_PROGRAMS): ${(error as Error).message}`);
  }
  const checked = z.array(programShape).safeParse(parsed, { error: readableIssue });
  if (!checked.success) {
    throw new AgentProgramFileError(
      `${file} (RATCHET_AGENT_PROGRAMS) is not a list of agent programs: ${problemLines(checked.error.issues, 'programs').join('; ')}`,
    );
  }
  const folder = path.dirname(path.resolve(file));
  const names = new Set(taken);
  return checked.data.map((program) => {
    if (names.has(program.name)) throw new AgentProgramFileError(`${file}: the name ${program.name} is taken (by an environment or another program)`);
    names.add(program.name);
    return { ...program, cwd: path.resolve(folder, program.cwd ?? '.') };
  });
}
