import type { SimulatedPolicyStats } from './policy-stats.js';

/** The model name the simulated policy reports, in `/get_model_info` and the `model_name` label of `/metrics`. */
export const SIMULATED_MODEL_NAME = 'ratchet/simulated-policy';

/**
 * `/metrics` as vLLM's v1 engine exposes it (vllm/v1/metrics/loggers.py, PrometheusStatLogger): the series a
 * benchmark reads for prefix caching and throughput, with vLLM's names, help texts and `model_name` and `engine`
 * labels. prometheus_client adds `_total` to a counter's name and writes labels sorted and values as floats.
 */
export function prometheusText(stats: SimulatedPolicyStats): string {
  const labels = `{engine="0",model_name="${SIMULATED_MODEL_NAME}"}`;
  const series: [name: string, type: 'gauge' | 'counter', help: string, value: number][] = [
    ['vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', stats.inFlight],
    ['vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', stats.prefixCacheQueries],
    ['vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', stats.prefixCacheHits],
    ['vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', stats.promptTokens],
    ['vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', stats.generatedTokens],
  ];
  return series
    .map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}${labels} ${pythonFloat(value)}\n`)
    .join('');
}

/** A count as Python prints a float: `12.0`. */
function pythonFloat(value: number): string {
  return Number.isInteger(value) ? `${value}.0` : String(value);
}
