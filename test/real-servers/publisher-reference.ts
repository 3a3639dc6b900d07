import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type ProbeReference, probeReference } from '../../src/policy/weights-proof.js';
import { VLLM_PYTHON } from '../../src/stack/vllm-server.js';

const run = promisify(execFile);

/**
 * What a publisher computes from the weights it saved (python -m ratchet_rollouts.weights_probe): the probe
 * reference, in the dtype the server computes in, or the logprobs of other `ids` (a trainer's held-out recomputation).
 */
export async function publisherReference(weights: string, options: { dtype?: 'auto' | 'float32'; ids?: number[] } = {}): Promise<ProbeReference> {
  const args = [
    '-m',
    'ratchet_rollouts.weights_probe',
    weights,
    '--dtype',
    options.dtype ?? 'auto',
    ...(options.ids ? ['--ids', JSON.stringify(options.ids)] : []),
  ];
  const { stdout } = await run(VLLM_PYTHON, args, { env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' }, maxBuffer: 1 << 24 });
  return probeReference.parse(JSON.parse(stdout));
}
