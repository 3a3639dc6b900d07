import type { Command } from 'commander';

/** One `ratchet` subcommand: its one-line summary, and how to build it (importing its modules only then). */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

/**
 * Every subcommand, in the order `ratchet --help` lists them. Loaded lazily: a command's modules (Temporal's
 * native bridge, Postgres, Arrow, the verifier) cost seconds to import, and `--help` needs none of them.
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'run',
    summary: 'submit trajectories for a dataset, show progress, wait and print a summary',
    load: async () => (await import('./run-command.js')).runCommand(),
  },
  {
    name: 'demo',
    summary: 'run the bundled sample end to end on the embedded stack',
    load: async () => (await import('./demo-command.js')).demoCommand(),
  },
  {
    name: 'export',
    summary: 'write stored trajectories (JSON lines, Arrow or Parquet)',
    load: async () => (await import('./export-command.js')).exportCommand(),
  },
  { name: 'monitor', summary: 'write the per-turn monitor records', load: async () => (await import('./export-command.js')).monitorCommand() },
  {
    name: 'submit',
    summary: 'submit a dataset to a training run as groups of n samples',
    load: async () => (await import('./submit-command.js')).submitCommand(),
  },
  {
    name: 'controller',
    summary: "admit waiting groups under each run's staleness bound, until Ctrl-C",
    load: async () => (await import('./controller-command.js')).controllerCommand(),
  },
  {
    name: 'consume',
    summary: 'claim the oldest finished groups of a run as one batch and write it',
    load: async () => (await import('./consume-command.js')).consumeCommand(),
  },
  {
    name: 'ack',
    summary: 'acknowledge a consumed batch (or extend its lease)',
    load: async () => (await import('./consume-command.js')).ackCommand(),
  },
  { name: 'runs', summary: 'training runs: status, cancel, watch', load: async () => (await import('./runs-command.js')).runsCommand() },
  {
    name: 'show',
    summary: 'print one trajectory turn by turn (answers, verdicts, feedback, rewards)',
    load: async () => (await import('./show-command.js')).showCommand(),
  },
  {
    name: 'ui',
    summary: 'serve the web UI: runs, groups, trajectories turn by turn, live',
    load: async () => (await import('./ui-command.js')).uiCommand(),
  },
  {
    name: 'dev',
    summary: 'run the embedded stack, both workers and the simulated policy until Ctrl-C',
    load: async () => (await import('./dev-command.js')).devCommand(),
  },
  {
    name: 'worker',
    summary: 'run one cpu or gpu worker against TEMPORAL_ADDRESS and DATABASE_URL',
    load: async () => (await import('./worker-command.js')).workerCommand(),
  },
  {
    name: 'sim-policy',
    summary: 'serve the simulated policy (SGLang protocol)',
    load: async () => (await import('./sim-policy-command.js')).simPolicyCommand(),
  },
  { name: 'policy', summary: 'policy versions: publish, current', load: async () => (await import('./policy-command.js')).policyCommand() },
  {
    name: 'verify',
    summary: 'check answers: {"gold", "pred"} JSON lines in, verdict lines out',
    load: async () => (await import('./verify-command.js')).verifyCommand(),
  },
  {
    name: 'health',
    summary: 'exit 0 when Temporal, Postgres (and the policy server) answer: a container healthcheck',
    load: async () => (await import('./health-command.js')).healthCommand(),
  },
  {
    name: 'setup',
    summary: "install the pinned Temporal CLI (and the Python example's virtualenv)",
    load: async () => (await import('./setup-command.js')).setupCommand(),
  },
];

/** The subcommand an argv names (`ratchet run …`, `ratchet help run`), or undefined for `--help`, `--version`. */
export function requestedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}
