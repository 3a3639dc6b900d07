import { describe, expect, it } from 'vitest';
import { decodePartialOutput, encodePartialOutput } from '../../src/activities/partial-output.js';

describe('heartbeat details for a partial turn', () => {
  it('round-trip ids, logprobs and per-token versions', () => {
    const output = { ids: [151644, 5, 0, 99], logprobs: [-0.5, -1.25, 0, -3], versions: [2, 2, 3, 3] };
    expect(decodePartialOutput(encodePartialOutput(output))).toEqual(output);
  });

  it('store versions as runs, so a long single-version turn costs a few bytes for them', () => {
    const output = { ids: new Array(16_384).fill(7), logprobs: new Array(16_384).fill(-0.5), versions: new Array(16_384).fill(4) };
    const encoded = encodePartialOutput(output);
    expect(encoded.versions.length).toBeLessThan(16);
    expect(JSON.stringify(encoded).length / 16_384).toBeLessThan(11);
    expect(decodePartialOutput(encoded)).toEqual(output);
  });

  it('treat missing, foreign or inconsistent details as no progress', () => {
    const empty = { ids: [], logprobs: [], versions: [] };
    expect(decodePartialOutput(undefined)).toEqual(empty);
    expect(decodePartialOutput({ turn: 3 })).toEqual(empty);
    const encoded = encodePartialOutput({ ids: [1, 2], logprobs: [-1, -1], versions: [0, 0] });
    expect(decodePartialOutput({ ...encoded, logprobs: encodePartialOutput({ ids: [1], logprobs: [-1], versions: [0] }).logprobs })).toEqual(empty);
  });
});
