import type { OpenAgentTrajectory } from './agent-endpoint.js';

/**
 * An agent program a CPU worker runs, by name: what a trajectory request's `environment` names. Registered with the
 * worker (RATCHET_AGENT_PROGRAMS, or `agentPrograms` when workers are started in code), never given by a request: a
 * request names a program, it does not bring a command line.
 */
export interface AgentProgram {
  name: string;
  /** The program and its arguments (no shell). */
  command: string[];
  /** Its working folder: the worker's own unless given. */
  cwd?: string;
  /** Variables it gets beside Ratchet's own (PATH, HOME and LANG are passed on from the worker; nothing else is). */
  env?: Record<string, string>;
}

/** Where the programs a worker runs reach their trajectory's endpoint: the worker's side of src/agent/agent-endpoint.ts. */
export interface AgentProgramHost {
  program(name: string): AgentProgram | undefined;
  /** Opens a program run: from now on the endpoint answers its key. Returns what the program is given to call it with. */
  openRun(trajectoryId: string, run: OpenAgentTrajectory): { baseUrl: string; apiKey: string };
  /** Closes it (the program exited or was killed): its key is refused from now on. */
  closeRun(trajectoryId: string, attempt: number): void;
}
