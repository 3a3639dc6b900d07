import { decodeFloat32, decodeInt32, encodeFloat32, encodeInt32 } from '../../tokens/token-codec.js';
import type { PartialOutput } from '../../policy/resumable-generation.js';

/**
 * Heartbeat details of earlier releases: ids and logprobs as base64 int32/float32 (~10.7 bytes a token), versions
 * as (version, run length) pairs. Kept so an attempt of this release resumes a turn a release-1 GPU worker began
 * (drop list: src/workflows/releases/drop-list.ts, `token-heartbeats`).
 */
export interface EncodedPartialOutput {
  ids: string;
  logprobs: string;
  versions: string;
}

export function encodePartialOutput(output: PartialOutput): EncodedPartialOutput {
  return {
    ids: encodeInt32(output.ids).toString('base64'),
    logprobs: encodeFloat32(output.logprobs).toString('base64'),
    versions: encodeInt32(runLengths(output.versions)).toString('base64'),
  };
}

function runLengths(values: readonly number[]): number[] {
  const pairs: number[] = [];
  for (const value of values) {
    if (pairs.length > 0 && pairs[pairs.length - 2] === value) pairs[pairs.length - 1]! += 1;
    else pairs.push(value, 1);
  }
  return pairs;
}

function expandRuns(pairs: readonly number[]): number[] {
  const values: number[] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) for (let n = 0; n < pairs[i + 1]!; n++) values.push(pairs[i]!);
  return values;
}

/** Reads an earlier release's last heartbeat; anything unreadable counts as no progress. */
export function decodePartialOutput(details: unknown): PartialOutput {
  const encoded = details as Partial<EncodedPartialOutput> | undefined;
  if (!encoded || typeof encoded.ids !== 'string' || typeof encoded.logprobs !== 'string' || typeof encoded.versions !== 'string') {
    return { ids: [], logprobs: [], versions: [] };
  }
  const output = {
    ids: decodeInt32(Buffer.from(encoded.ids, 'base64')),
    logprobs: decodeFloat32(Buffer.from(encoded.logprobs, 'base64')),
    versions: expandRuns(decodeInt32(Buffer.from(encoded.versions, 'base64'))),
  };
  const consistent = output.ids.length === output.logprobs.length && output.ids.length === output.versions.length;
  return consistent ? output : { ids: [], logprobs: [], versions: [] };
}
