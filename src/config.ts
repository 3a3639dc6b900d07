import path from 'node:path';
import { z } from 'zod';
import { registerEnvironmentSecrets } from './secrets/known-secrets.js';
import { withSecretFiles } from './secrets/secret-files.js';

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1');
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value ? value : undefined));

const environment = z.object({
  TEMPORAL_ADDRESS: optionalText,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_API_KEY: optionalText,
  TEMPORAL_TLS: flag,
  DATABASE_URL: optionalText,
  RATCHET_STATE_DIR: z.string().min(1).default('.ratchet'),
  RATCHET_TOKENIZER: optionalText,
  RATCHET_POLICY_URL: optionalText,
  RATCHET_POLICY_API_KEY: optionalText,
  RATCHET_POLICY_BACKEND: z.enum(['sglang', 'vllm']).default('sglang'),
  RATCHET_GPU_SLOTS: z.coerce.number().int().positive().default(32),
  RATCHET_GPU_SERVER_NAME: optionalText,
  RATCHET_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().positive().default(2000),
  RATCHET_WORKFLOW_CACHE: z.coerce.number().int().min(2).default(400),
  RATCHET_UI_URL: z.string().url().optional(),
  RATCHET_ENVIRONMENTS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? '')
        .split(',')
        .map((module) => module.trim())
        .filter(Boolean),
    ),
  RATCHET_AGENT_PROGRAMS: optionalText,
  RATCHET_AGENT_LISTEN: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[^:\s\[\]]+):\d{1,5}$/, 'expected host:port, e.g. 0.0.0.0:8700')
    .optional(),
  RATCHET_AGENT_URL: z.string().url().optional(),
  RATCHET_VERIFIER_THREADS: z.coerce.number().int().positive().optional(),
  RATCHET_VERIFIER_BUDGET_MS: z.coerce.number().int().positive().default(3000),
  RATCHET_TEMPORAL_PORT: z.coerce.number().int().positive().default(7233),
  RATCHET_TEMPORAL_UI_PORT: z.coerce.number().int().positive().default(8233),
  RATCHET_POSTGRES_PORT: z.coerce.number().int().positive().default(54329),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

/** Values never echoed back in a configuration error. */
const SECRET_VARIABLES = new Set(['DATABASE_URL', 'TEMPORAL_API_KEY', 'RATCHET_POLICY_API_KEY', 'RATCHET_POLICY_URL']);

/** An environment variable holds a value Ratchet cannot use; the message names the variable and what it expects. */
export class InvalidConfiguration extends Error {
  override readonly name = 'InvalidConfiguration';
}

/** Ratchet's configuration, from the environment. Unset addresses mean "start the embedded part". */
export type RatchetConfig = ReturnType<typeof loadConfig>;

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env) {
  let env: NodeJS.ProcessEnv;
  try {
    env = withSecretFiles(rawEnv);
  } catch (error) {
    throw new InvalidConfiguration(`invalid configuration: ${(error as Error).message}`);
  }
  registerEnvironmentSecrets(env); // values read from *_FILE too: masked wherever they would be printed
  const parsed = environment.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => {
        const name = issue.path.join('.');
        const given = SECRET_VARIABLES.has(name) ? '' : ` (got ${JSON.stringify(env[name])})`;
        return `${name}: ${issue.message}${given}`;
      })
      .join('; ');
    throw new InvalidConfiguration(`invalid configuration: ${problems}`);
  }
  const values = parsed.data;
  return {
    temporal: {
      address: values.TEMPORAL_ADDRESS,
      namespace: values.TEMPORAL_NAMESPACE,
      apiKey: values.TEMPORAL_API_KEY,
      tls: values.TEMPORAL_TLS || Boolean(values.TEMPORAL_API_KEY),
    },
    databaseUrl: values.DATABASE_URL,
    stateDir: path.resolve(values.RATCHET_STATE_DIR),
    tokenizerDir: values.RATCHET_TOKENIZER,
    policyUrl: values.RATCHET_POLICY_URL,
    policyBackend: values.RATCHET_POLICY_BACKEND,
    /** Sent as `Authorization: Bearer` to the inference server (SGLang and vLLM `--api-key`); never printed. */
    policyApiKey: values.RATCHET_POLICY_API_KEY,
    gpuSlots: values.RATCHET_GPU_SLOTS,
    gpuServerName: values.RATCHET_GPU_SERVER_NAME,
    heartbeatIntervalMs: values.RATCHET_HEARTBEAT_INTERVAL_MS,
    workflowCache: values.RATCHET_WORKFLOW_CACHE,
    uiUrl: values.RATCHET_UI_URL,
    environmentModules: values.RATCHET_ENVIRONMENTS,
    /** A JSON file of the agent programs the CPU worker runs (docs/agent-programs.md). */
    agentProgramFile: values.RATCHET_AGENT_PROGRAMS,
    /**
     * Where the agent programs' endpoint listens (RATCHET_AGENT_LISTEN, host:port; loopback and a free port unless
     * set) and the URL agents reach it at (RATCHET_AGENT_URL; the listening address unless set): an agent workflow's
     * worker on another machine needs both.
     */
    agentEndpoint: { ...listenAddress(values.RATCHET_AGENT_LISTEN), url: values.RATCHET_AGENT_URL },
    verifier: { size: values.RATCHET_VERIFIER_THREADS, budgetMs: values.RATCHET_VERIFIER_BUDGET_MS },
    ports: { temporal: values.RATCHET_TEMPORAL_PORT, temporalUi: values.RATCHET_TEMPORAL_UI_PORT, postgres: values.RATCHET_POSTGRES_PORT },
    logLevel: values.LOG_LEVEL,
  };
}

/** `host:port` (the host may be a bracketed IPv6 address) as Node's listen options. */
function listenAddress(listen: string | undefined): { hostname?: string; port?: number } {
  if (listen === undefined) return {};
  const colon = listen.lastIndexOf(':');
  return { hostname: listen.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(colon + 1)) };
}
