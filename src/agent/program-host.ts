import type { OpenAgentTrajectory } from './agent-endpoint.js';

/**
 * An agent program a CPU worker runs, by name: what a trajectory request's `environment` names. Registered with the
 * worker (RATCHET_AGENT_PROGRAMS, or `agentPrograms` when workers are started in code), never given by a request: a
 * request names a program, it does not bring a command line. A program is a process the worker starts, or a Temporal
 * workflow of the user's own that the trajectory starts as its child.
 */
export type AgentProgram = AgentProcessProgram | AgentWorkflowProgram;

/** A program the CPU worker starts as a process, once per run. */
export interface AgentProcessProgram {
  name: string;
  /** The program and its arguments (no shell). */
  command: string[];
  /** Its working folder: the worker's own unless given. */
  cwd?: string;
  /** Variables it gets beside Ratchet's own (PATH, HOME and LANG are passed on from the worker; nothing else is). */
  env?: Record<string, string>;
}

/**
 * An agent that is a Temporal workflow (model call = activity, tool = activity), run by the user's own worker on the
 * user's task queue: the trajectory starts it as a child workflow with an AgentWorkflowInput (docs/agent-programs.md).
 */
export interface AgentWorkflowProgram {
  name: string;
  /** The workflow type the user's worker registers. */
  workflow: string;
  /** The task queue the user's worker polls. */
  taskQueue: string;
}

/** What an agent workflow is started with: what a process gets in OPENAI_BASE_URL, OPENAI_API_KEY, RATCHET_MODEL, RATCHET_TASK. */
export interface AgentWorkflowInput {
  baseUrl: string;
  apiKey: string;
  model: string;
  task: AgentTask;
}

/** The task an agent program is given (RATCHET_TASK's file, or an agent workflow's `task`): never the gold answer. */
export interface AgentTask {
  trajectoryId: string;
  qid: string;
  problem: string;
  args: unknown;
  seed: number;
  /** The program run, from 1: a run again is answered every call it already made from the store. */
  attempt: number;
}

/** The model name a program is given (any name is answered by the trajectory's policy, and echoed). */
export const AGENT_MODEL = 'ratchet-policy';

/** Where the programs a worker runs reach their trajectory's endpoint: the worker's side of src/agent/agent-endpoint.ts. */
export interface AgentProgramHost {
  program(name: string): AgentProgram | undefined;
  /**
   * Opens a program run: from now on the endpoint answers its key. Returns what the program is given to call it with.
   * `closeAfterMs` closes it by itself then (an agent workflow's run, which no activity of this worker waits for).
   */
  openRun(trajectoryId: string, run: OpenAgentTrajectory, closeAfterMs?: number): { baseUrl: string; apiKey: string };
  /** Closes it (the program exited or was killed): its key is refused from now on. */
  closeRun(trajectoryId: string, attempt: number): void;
}
