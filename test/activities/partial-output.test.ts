import { describe, expect, it } from 'vitest';
import { checkpointHeartbeat, readHeartbeat } from '../../src/activities/partial-output.js';
import { decodePartialOutput, encodePartialOutput } from '../../src/activities/releases/token-heartbeats.js';

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

describe('heartbeat cursor of a checkpointed turn', () => {
  it('stays a few dozen bytes however many tokens the checkpoint holds', () => {
    for (const tokens of [1_000, 16_000, 200_000]) {
      const details = checkpointHeartbeat({ attempt: 3, tokens });
      expect(JSON.stringify(details).length).toBeLessThan(64);
      expect(readHeartbeat(details)).toEqual({ cursor: { attempt: 3, tokens }, carried: { ids: [], logprobs: [], versions: [] } });
    }
  });

  it('still read the tokens an earlier release heartbeated, so a retry after a deploy resumes from them', () => {
    const output = { ids: [9, 8, 7], logprobs: [-0.1, -0.2, -0.3].map(Math.fround), versions: [1, 1, 2] };
    expect(readHeartbeat(encodePartialOutput(output))).toEqual({ carried: output });
    expect(readHeartbeat(undefined)).toEqual({ carried: { ids: [], logprobs: [], versions: [] } });
    expect(readHeartbeat({ checkpoint: { attempt: 'x', tokens: 3 } })).toEqual({ carried: { ids: [], logprobs: [], versions: [] } });
  });
});
