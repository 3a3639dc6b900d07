import { describe, expect, it } from 'vitest';
import { judgeServedLogprobs, type ProbeObservation, type TopLogprob } from '../../src/policy/logprob-verdict.js';

const top = (pairs: [number, number][]): TopLogprob[] => pairs.map(([id, logprob]) => ({ id, logprob }));

// A real vLLM 0.32 (CPU) with the tiny random-weight Qwen3, prompt "The capital of France is", started with
// --logprobs-mode processed_logprobs: a near-uniform model (about -10.7 for the top token), gaps of tenths of a nat.
const plain = top([
  [374, -10.660308837890625],
  [105178, -10.824371337890625],
  [16520, -10.918121337890625],
  [81709, -11.023590087890625],
  [101088, -11.050933837890625],
  [106452, -11.062652587890625],
  [136618, -11.078277587890625],
  [58355, -11.082183837890625],
]);
const processed: ProbeObservation = {
  plain,
  tempered: top([
    [374, -7.1552324295043945],
    [105178, -7.8114824295043945],
    [16520, -8.186482429504395],
    [81709, -8.608357429504395],
    [101088, -8.717732429504395],
    [106452, -8.764607429504395],
    [136618, -8.827107429504395],
    [58355, -8.842732429504395],
  ]),
  truncated: top([
    [374, -0.61447674036026],
    [105178, -0.77853924036026],
    [7, -9999],
    [1, -9999],
  ]),
};
// What the same server answers without the flag (raw_logprobs, vLLM's default): the T = 1 numbers whatever was asked.
const raw: ProbeObservation = { plain, tempered: plain, truncated: plain };
// SGLang's default: log softmax(z / T), never renormalised after top-k.
const temperedOnly: ProbeObservation = { ...processed, truncated: plain };

describe('judgeServedLogprobs', () => {
  it('finds processed logprobs from a near-uniform random model: gaps ×4 at T = 0.25, the top two renormalised to 1', () => {
    const served = judgeServedLogprobs([processed, processed]);
    expect(served).toMatchObject({ temperature: 'applied', truncation: 'applied' });
    expect(served.evidence).toMatch(/gaps ×4\.000/);
  });

  it('finds raw logprobs: the same numbers at T = 0.25 and at top-k 2', () => {
    const served = judgeServedLogprobs([raw, raw]);
    expect(served).toMatchObject({ temperature: 'ignored', truncation: 'ignored' });
    expect(served.evidence).toMatch(/gaps ×1\.000/);
  });

  it('tells temperature from truncation: SGLang applies the one and not the other', () => {
    expect(judgeServedLogprobs([temperedOnly])).toMatchObject({ temperature: 'applied', truncation: 'ignored' });
  });

  it('cannot decide on a flat top (every gap under a thousandth of a nat), and says so', () => {
    const flat = top([
      [1, -11.9],
      [2, -11.9],
      [3, -11.9],
      [4, -11.9],
    ]);
    const served = judgeServedLogprobs([{ plain: flat, tempered: flat, truncated: flat }]);
    expect(served.temperature).toBe('undecided');
    expect(served.evidence).toMatch(/no gap to measure/);
  });

  it('cannot decide truncation on a model whose top two hold all the mass, but still decides temperature', () => {
    const peaked = top([
      [1, -0.0005],
      [2, -8],
      [3, -9],
    ]);
    const served = judgeServedLogprobs([
      {
        plain: peaked,
        tempered: top([
          [1, 0],
          [2, -31.998],
          [3, -35.998],
        ]),
        truncated: top([
          [1, -0.0003],
          [2, -8.1],
        ]),
      },
    ]);
    expect(served).toMatchObject({ temperature: 'applied', truncation: 'undecided' });
  });

  it("counts tokens tied with the k-th as kept, as vLLM's top-k does (bf16 logits of a near-uniform model tie often)", () => {
    // As the tiny model answers "1 + 1 =" (its kept mass was 0.67 of the top two alone): here three tokens tie at the
    // second logprob, so top-k 2 keeps four.
    const tied = top([
      [17, -10.6],
      [18, -10.79],
      [19, -10.79],
      [20, -10.79],
      [21, -11.2],
      [22, -11.3],
    ]);
    const keptMass = Math.exp(-10.6) + 3 * Math.exp(-10.79);
    const truncated = top([
      [17, -10.6 - Math.log(keptMass)],
      [18, -10.79 - Math.log(keptMass)],
      [19, -10.79 - Math.log(keptMass)],
      [20, -10.79 - Math.log(keptMass)],
      [21, -9999],
    ]);
    const served = judgeServedLogprobs([{ plain: tied, tempered: tied.map((t) => ({ id: t.id, logprob: 4 * t.logprob })), truncated }]);
    expect(served.truncation).toBe('applied');
  });

  it('decides from the prompts with evidence, and is undecided when two prompts disagree', () => {
    const flat = top([
      [1, -11.9],
      [2, -11.9],
    ]);
    expect(judgeServedLogprobs([{ plain: flat, tempered: flat, truncated: flat }, processed]).temperature).toBe('applied');
    expect(judgeServedLogprobs([processed, raw])).toMatchObject({ temperature: 'undecided', truncation: 'undecided' });
  });

  it('is undecided on a ratio that is neither ×1 nor ×1/T (a server doing something else)', () => {
    const halfway = { ...processed, tempered: plain.map((t) => ({ id: t.id, logprob: t.logprob * 2.5 })) };
    expect(judgeServedLogprobs([halfway]).temperature).toBe('undecided');
  });

  it('compares by token id, so an answer ranking a token differently or leaving one out still counts', () => {
    const reordered = { ...processed, tempered: [...processed.tempered].reverse().filter((t) => t.id !== 16520) };
    expect(judgeServedLogprobs([reordered]).temperature).toBe('applied');
  });

  it('is undecided with no observation at all (every probe request failed)', () => {
    expect(judgeServedLogprobs([])).toMatchObject({ temperature: 'undecided', truncation: 'undecided' });
  });
});
