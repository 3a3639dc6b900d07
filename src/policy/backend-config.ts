import { z } from 'zod';
import type { InferenceBackend } from './inference-backend.js';
import { SglangBackend } from './sglang-backend.js';
import { VllmBackend } from './vllm-backend.js';

/** Which inference server the GPU worker talks to. The simulated policy speaks SGLang's protocol, so it is `sglang`. */
export const backendKind = z.enum(['sglang', 'vllm']);
export type BackendKind = z.infer<typeof backendKind>;

/** The backend for a server of `kind` at `url`; `apiKey` (RATCHET_POLICY_API_KEY) goes as a bearer token on every request. */
export function createBackend(kind: BackendKind, url: string, apiKey?: string): InferenceBackend {
  return kind === 'vllm' ? new VllmBackend(url, { apiKey }) : new SglangBackend(url, { apiKey });
}
