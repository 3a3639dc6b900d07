import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AgentProgram } from '../agent/program-host.js';
import { problemLines, readableIssue } from '../trajectory/schema-problems.js';

export class AgentProgramFileError extends Error {
  override readonly name = 'AgentProgramFileError';
}

const programName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a name of letters, digits, ".", "_" and "-" (at most 64)');

// One shape with both kinds' fields, checked for exactly one kind after: a union's error would list every field of
// every member, where the user needs "give command or workflow".
const programShape = z
  .strictObject({
    name: programName,
    command: z.array(z.string().min(1)).min(1).optional(),
    cwd: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).optional(),
    workflow: z.string().min(1).optional(),
    taskQueue: z.string().min(1).optional(),
  })
  .superRefine((program, context) => {
    const problem = programKindProblem(program);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });

/** Why an entry is neither a process (`command`, `cwd?`, `env?`) nor a workflow (`workflow`, `taskQueue`), or undefined. */
function programKindProblem(program: { command?: unknown; cwd?: unknown; env?: unknown; workflow?: unknown; taskQueue?: unknown }) {
  if ((program.command === undefined) === (program.workflow === undefined))
    return 'give exactly one of "command" (a process the worker starts) and "workflow" (a Temporal workflow type, with its "taskQueue")';
  if (program.workflow !== undefined && program.taskQueue === undefined) return '"workflow" needs "taskQueue": the queue your agent worker polls';
  if (program.workflow !== undefined && (program.cwd !== undefined || program.env !== undefined))
    return '"cwd" and "env" are for a command: a workflow runs in your own worker';
  if (program.command !== undefined && program.taskQueue !== undefined) return '"taskQueue" goes with "workflow", not with "command"';
  return undefined;
}

/**
 * The agent programs a CPU worker runs (`RATCHET_AGENT_PROGRAMS`: a JSON file holding a list of `{name, command, cwd?,
 * env?}` or `{name, workflow, taskQueue}`, docs/agent-programs.md). A relative `cwd` is resolved from the file's folder, which is also the default, so
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
    const { name, command, cwd, env, workflow, taskQueue } = program;
    if (workflow !== undefined) return { name, workflow, taskQueue: taskQueue! };
    return { name, command: command!, cwd: path.resolve(folder, cwd ?? '.'), ...(env === undefined ? {} : { env }) };
  });
}
