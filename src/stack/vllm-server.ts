import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { exited, stopChild } from './child-process.js';
import { pollUntil, PollTimeout } from '../timing/poll-until.js';

/** What `npm run setup:vllm` made: the CPU vLLM's virtualenv and the two tiny policy versions. */
export const VLLM_STATE = path.resolve(import.meta.dirname, '../..', process.env.RATCHET_STATE_DIR ?? '.ratchet', 'vllm');
export const VLLM_PYTHON = path.join(VLLM_STATE, 'venv/bin/python');
export const POLICY_MODELS = [0, 1].map((version) => path.join(VLLM_STATE, 'models', `policy-v${version}`));
/** A tiny Qwen3 whose next-token distribution is concentrated, so temperature and top-p change logprobs by nats. */
export const PEAKED_MODEL = path.join(VLLM_STATE, 'models', 'policy-peaked');
/** The peaked model's next version (another seed, untied as it is): an untied checkpoint reloaded in place. */
export const PEAKED_MODEL_V1 = path.join(VLLM_STATE, 'models', 'policy-peaked-v1');
/** A hand-written tiny Qwen3 that answers every call with a Hermes tool call (scripts/vllm/make_tiny_model.py --tool-caller). */
export const TOOL_CALLER_MODEL = path.join(VLLM_STATE, 'models', 'tool-caller');
export const MAX_MODEL_LEN = 2048;
/** `--worker-extension-cls` for Ratchet's checked reload (python/ratchet_rollouts/vllm_reload.py). */
export const VLLM_WEIGHT_RELOAD_EXTENSION = 'ratchet_rollouts.vllm_reload.WeightReload';

/** A real vLLM OpenAI server in its own process group, so stopping it also ends its EngineCore child. */
export interface RunningVllm {
  url: string;
  port: number;
  pid: number;
  /** SIGTERM to the whole group (SIGKILL after 20 s), and wait for the server to exit. */
  stop(): Promise<void>;
  /** SIGKILL to the whole group: a crashed inference host. */
  kill(): Promise<void>;
  metrics(): Promise<VllmMetrics>;
}

/** The two Prometheus series the suite reads from `/metrics`. */
export interface VllmMetrics {
  /** `vllm:num_requests_running`: requests in the engine's running batch now. */
  running: number;
  /** `vllm:generation_tokens_total`: every token the engine generated since it started, kept or not. */
  generatedTokens: number;
}

/**
 * Starts `python -m vllm.entrypoints.openai.api_server` on 127.0.0.1 with the settings a 2-core CI machine
 * affords: a 1 GiB KV cache, a 2,048-token window, 8 sequences, processed logprobs, prefix caching with its hits
 * reported. Dev mode exposes /pause,
 * /collective_rpc, /reset_prefix_cache and /resume for weight reloads. A start takes 1-2 minutes here, mostly
 * python imports.
 */
export async function startVllm(
  options: {
    port?: number;
    model?: string;
    dtype?: 'bfloat16' | 'float32';
    rawLogprobs?: boolean;
    extraArgs?: readonly string[];
    /** The worker extension class (default Ratchet's checked reload, python/ratchet_rollouts/vllm_reload.py); null: none. */
    workerExtension?: string | null;
    /** Extra environment (a test's PYTHONPATH for its own extension). */
    env?: Record<string, string>;
  } = {},
): Promise<RunningVllm> {
  if (!existsSync(VLLM_PYTHON)) throw new Error(`no vLLM environment at ${VLLM_STATE}: run \`npm run setup:vllm\` first`);
  const port = options.port ?? (await freePort());
  const log = path.join(os.tmpdir(), `ratchet-vllm-${port}-${Date.now()}.log`);
  const out = openSync(log, 'a');
  const child = spawn(
    VLLM_PYTHON,
    [
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--model',
      options.model ?? POLICY_MODELS[0]!,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--max-model-len',
      String(MAX_MODEL_LEN),
      '--max-num-seqs',
      '8',
      '--dtype',
      options.dtype ?? 'bfloat16',
      // Logprobs of the distribution each token is sampled from (after temperature, penalties and truncation), as
      // every server Ratchet serves from must return them; `rawLogprobs` starts one as vLLM does by default.
      ...(options.rawLogprobs ? [] : ['--logprobs-mode', 'processed_logprobs']),
      // No torch.compile warm-up and no separate worker process: each python start imports torch and vLLM again,
      // which is most of a start on a busy 2-core machine (75 s instead of 110 s; a tiny model decodes fast anyway).
      '--enforce-eager',
      '--distributed-executor-backend',
      'uni',
      // Turn affinity (issue 27) sends a trajectory's next turn back to the server holding its prefix: prefix caching on
      // explicitly (not left to the release's default), and each streamed completion's final usage chunk reporting the
      // prompt tokens served from it (`usage.prompt_tokens_details.cached_tokens`), stored with the turn for the run
      // page's prefix-cache hit rate. Both are in the pinned vLLM (0.32); a test may turn them off below (--no-...).
      '--enable-prefix-caching',
      '--enable-prompt-tokens-details',
      // Ratchet's checked in-place reload (checkpoint checked before the model is touched, a tied head rebuilt); the
      // package is installed in this environment (scripts/vllm/setup.sh), as it must be on a production vLLM host.
      ...(options.workerExtension === null ? [] : ['--worker-extension-cls', options.workerExtension ?? VLLM_WEIGHT_RELOAD_EXTENSION]),
      // A test's own flags, after the defaults (e.g. test/real-servers/turn-affinity.real.ts: prefix caching).
      ...(options.extraArgs ?? []),
    ],
    {
      detached: true,
      stdio: ['ignore', out, out],
      env: { ...process.env, VLLM_CPU_KVCACHE_SPACE: '1', VLLM_SERVER_DEV_MODE: '1', HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', ...options.env },
    },
  );
  started.add(child);
  child.once('exit', () => started.delete(child));
  const url = `http://127.0.0.1:${port}`;
  const server: RunningVllm = {
    url,
    port,
    pid: child.pid!,
    stop: () => stopGroup(child, 'SIGTERM'),
    kill: () => stopGroup(child, 'SIGKILL'),
    metrics: () => readMetrics(url),
  };
  try {
    await untilHealthy(url, child, log, 360_000);
  } catch (error) {
    await server.kill();
    throw error;
  }
  return server;
}

const started = new Set<ChildProcess>();

/** Stops every server this process started and has not stopped, even one still starting when a test timed out. */
export async function stopStartedServers(): Promise<void> {
  for (const child of [...started]) {
    await stopGroup(child, 'SIGTERM');
  }
}

async function untilHealthy(url: string, child: ChildProcess, log: string, timeoutMs: number): Promise<void> {
  await pollUntil(
    () =>
      fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      ),
    {
      what: `vLLM at ${url} to be healthy`,
      timeoutMs,
      intervalMs: 1_000,
      abortIf: () => {
        if (exited(child)) throw new Error(`vLLM exited while starting (${child.exitCode ?? child.signalCode}):\n${tail(log)}`);
      },
    },
  ).catch((error: unknown) => {
    throw error instanceof PollTimeout ? new Error(`vLLM not healthy within ${timeoutMs} ms:\n${tail(log)}`, { cause: error }) : error;
  });
}

/** The whole group (the EngineCore child may outlive the API server by a moment), SIGKILL after 20 s. */
async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  await stopChild(child, { signal, graceMs: 20_000, group: true });
}

async function readMetrics(url: string): Promise<VllmMetrics> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const value = (name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    if (!line) throw new Error(`vLLM /metrics has no ${name}`);
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return { running: value('vllm:num_requests_running'), generatedTokens: value('vllm:generation_tokens_total') };
}

function tail(log: string): string {
  return readFileSync(log, 'utf8').split('\n').slice(-30).join('\n');
}
