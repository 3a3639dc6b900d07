import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { CallTerms } from '../agent/chat-completion-request.js';
import { AGENT_MODEL, type AgentProgramHost } from '../agent/program-host.js';
import { checkProgramResult, RESULT_LIMIT_BYTES, type AgentProgramResult } from '../agent/program-result.js';
import type { JsonValue } from '../environments/environment.js';
import { FailureType } from '../trajectory/failure.js';

export interface RunAgentProgramInput {
  trajectoryId: string;
  qid: string;
  problem: string;
  args: { [key: string]: JsonValue } | null;
  seed: number;
  /** The program, by the name the worker registered it under. */
  program: string;
  terms: CallTerms;
  /** How long one run may take: past it the program is killed and the run counts as failed. */
  seconds: number;
}

/** A program run that returned: its result, and which run it was (the workflow checks it made every recorded call). */
export interface AgentProgramRun {
  result: AgentProgramResult;
  attempt: number;
}

/** How often the activity heartbeats while its program runs: a lost CPU worker is noticed within the heartbeat timeout. */
export const PROGRAM_HEARTBEAT_MS = 2_000;
/** What of a failed run's output is kept in its failure: the end of stderr (then stdout), enough for a traceback. */
const OUTPUT_TAIL_CHARS = 4_000;
/** Variables passed on from the worker; nothing else of its environment (database URLs, secrets) reaches a program. */
const PASSED_ON = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'PYTHONPATH', 'NODE_PATH'];

/**
 * Runs a trajectory's agent program once: started with its trajectory's base URL and key, the task in a file, and a
 * file for its result; the activity heartbeats while it runs. Exit 0 with a result is the episode's end. A non-zero
 * exit, a kill or the deadline fail this attempt, retryable (`AgentProgramFailed`): the next attempt runs the program
 * again with a new key, and the workflow answers every call it already made from the store. Cancelled (the workflow
 * ended, or its CPU worker is going), the program's whole process group is killed.
 */
export function runAgentProgramActivity(host: AgentProgramHost | undefined) {
  return async function runAgentProgram(input: RunAgentProgramInput): Promise<AgentProgramRun> {
    const context = Context.current();
    const program = host?.program(input.program);
    if (!host || !program || !('command' in program)) {
      // A worker without the program (registered on another): retried, so that a worker that has it can take it.
      throw ApplicationFailure.retryable(`this CPU worker runs no agent program named ${input.program}`, FailureType.AgentProgramFailed);
    }
    const attempt = context.info.attempt;
    const { baseUrl, apiKey } = host.openRun(input.trajectoryId, { ...input.terms, policy: AGENT_MODEL, attempt });
    const folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-agent-'));
    try {
      const task = path.join(folder, 'task.json');
      const result = path.join(folder, 'result.json');
      const { trajectoryId, qid, problem, args, seed } = input;
      await writeFile(task, JSON.stringify({ trajectoryId, qid, problem, args, seed, attempt }));
      const env = {
        ...Object.fromEntries(PASSED_ON.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]]))),
        ...program.env,
        OPENAI_BASE_URL: baseUrl,
        OPENAI_API_KEY: apiKey,
        RATCHET_MODEL: AGENT_MODEL,
        RATCHET_TASK: task,
        RATCHET_RESULT: result,
      };
      const run = await runToEnd(program.command, { cwd: program.cwd ?? process.cwd(), env }, input.seconds * 1000, context);
      const what = `agent program ${program.name} (attempt ${attempt}) for ${trajectoryId}`;
      if (run.exit !== 0) {
        throw ApplicationFailure.retryable(`${what} ${run.exit}${tail(run.output)}`, FailureType.AgentProgramFailed);
      }
      const size = await stat(result).then(
        (found) => found.size,
        () => undefined,
      );
      if (size === undefined)
        throw ApplicationFailure.nonRetryable(`${what} exited 0 without writing its result to RATCHET_RESULT`, FailureType.AgentResultInvalid);
      if (size > RESULT_LIMIT_BYTES) {
        throw ApplicationFailure.nonRetryable(
          `${what} wrote a result of ${size} bytes, over the ${RESULT_LIMIT_BYTES} a result may hold`,
          FailureType.AgentResultInvalid,
        );
      }
      const text = await readFile(result, 'utf8');
      const checked = checkProgramResult(text);
      if ('invalid' in checked) throw ApplicationFailure.nonRetryable(`${what}: ${checked.invalid}`, FailureType.AgentResultInvalid);
      return { result: checked.result, attempt };
    } finally {
      host.closeRun(input.trajectoryId, attempt);
      await rm(folder, { recursive: true, force: true });
    }
  };
}

interface ProgramRun {
  /** 0, or how it ended otherwise ("exited with code 2", "was killed by SIGKILL", "ran past its 1800 s"). */
  exit: 0 | string;
  output: string;
}

/** Runs the program in a process group of its own to its end, heartbeating; kills the group on cancellation or deadline. */
function runToEnd(
  command: string[],
  options: { cwd: string; env: Record<string, string> },
  deadlineMs: number,
  context: Context,
): Promise<ProgramRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let overran = false;
    const keep = (text: string, chunk: Buffer) => (text + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    child.stdout.on('data', (chunk: Buffer) => (stdout = keep(stdout, chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr = keep(stderr, chunk)));
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const heartbeat = setInterval(() => context.heartbeat(), PROGRAM_HEARTBEAT_MS);
    const deadline = setTimeout(() => {
      overran = true;
      killGroup();
    }, deadlineMs);
    const cancelled = context.cancelled.catch((error: unknown) => {
      killGroup();
      return error;
    });
    const done = () => {
      clearInterval(heartbeat);
      clearTimeout(deadline);
    };
    child.on('error', (error) => {
      done();
      resolve({ exit: `could not be started (${error.message})`, output: stderr || stdout });
    });
    child.on('close', (code, signal) => {
      done();
      // Whatever it left running in its group goes with it.
      killGroup();
      const output = stderr || stdout;
      if (context.cancellationSignal.aborted) {
        void cancelled.then((error) => reject(error instanceof CancelledFailure ? error : new CancelledFailure('cancelled')));
        return;
      }
      if (overran) resolve({ exit: `ran past its ${deadlineMs / 1000} s (agentProgramSeconds) and was killed`, output });
      else if (code === 0) resolve({ exit: 0, output });
      else resolve({ exit: signal ? `was killed by ${signal}` : `exited with code ${code}`, output });
    });
  });
}

function tail(output: string): string {
  const trimmed = output.trim();
  return trimmed === '' ? ' (no output)' : `; its output ends:\n${trimmed}`;
}
