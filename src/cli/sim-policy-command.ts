import { once } from 'node:events';
import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { NO_FAULTS } from '../policy/simulated/faults.js';
import { DEFAULT_PREFIX_CACHE_TOKENS, DEFAULT_SIMULATED_POLICY } from '../policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy } from '../policy/simulated/server.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { SAMPLE_DATASET } from './demo-command.js';
import { finiteNumber, loadProblems, nonNegativeInt, positiveInt } from './shared-options.js';

export function simPolicyCommand(): Command {
  return new Command('sim-policy')
    .description('serve the simulated policy (SGLang /generate protocol) on 127.0.0.1')
    .option('--dataset <file>', 'problems whose gold answers it knows', SAMPLE_DATASET)
    .option('--port <port>', 'port', positiveInt, 30000)
    .option('--correct <p>', 'probability a turn is right', finiteNumber)
    .option('--tokens-per-second <n>', 'decode speed per request', finiteNumber)
    .option('--reasoning-tokens <n>', 'mean reasoning length', positiveInt)
    .option('--seed <n>', 'seed for repeatable answers', positiveInt)
    .option('--chunk-tokens <n>', "output tokens per streamed chunk (SGLang's --stream-interval)", positiveInt)
    .option('--incremental-streaming-output', 'stream only the new tokens in each chunk, as SGLang does with this flag')
    .option('--seed-per-request', 'with --seed: draw each answer from the seed and the request id, whatever the arrival order')
    .option(
      '--prefix-cache-tokens <n>',
      `prefix cache capacity in tokens, as vLLM's automatic prefix caching; 0 turns it off (default ${DEFAULT_PREFIX_CACHE_TOKENS})`,
      nonNegativeInt,
    )
    .option(
      '--prefill-tokens-per-second <n>',
      'prefill speed: a request waits its uncached prompt tokens at this speed before its first token (default 0: no wait)',
      finiteNumber,
    )
    .option('--raw-logprobs', "return the model's own logprobs whatever the sampling, as vLLM does without --logprobs-mode processed_logprobs")
    .action(async (flags) => {
      const tokenizer = await loadModelTokenizer(loadConfig().tokenizerDir);
      const policy = await startSimulatedPolicy(
        tokenizer,
        new AnswerBook(await loadProblems(flags.dataset)),
        {
          ...DEFAULT_SIMULATED_POLICY,
          faults: NO_FAULTS,
          ...(flags.correct === undefined ? {} : { correctProbability: flags.correct }),
          ...(flags.tokensPerSecond === undefined ? {} : { tokensPerSecond: flags.tokensPerSecond }),
          ...(flags.reasoningTokens === undefined ? {} : { reasoningTokens: flags.reasoningTokens }),
          ...(flags.seed === undefined ? {} : { seed: flags.seed }),
          ...(flags.seedPerRequest ? { seedPerRequest: true } : {}),
          ...(flags.chunkTokens === undefined ? {} : { chunkTokens: flags.chunkTokens }),
          ...(flags.incrementalStreamingOutput ? { incrementalStreamingOutput: true } : {}),
          ...(flags.rawLogprobs ? { logprobs: 'raw' as const } : {}),
          ...(flags.prefixCacheTokens === undefined ? {} : { prefixCacheTokens: flags.prefixCacheTokens }),
          ...(flags.prefillTokensPerSecond === undefined ? {} : { prefillTokensPerSecond: flags.prefillTokensPerSecond }),
        },
        { port: flags.port },
      );
      process.stdout.write(`simulated policy at ${policy.url}\n`);
      await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
      await policy.close();
    });
}
