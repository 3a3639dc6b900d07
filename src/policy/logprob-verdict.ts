/** One candidate of the first generated position, as the server ranked it. */
export interface TopLogprob {
  id: number;
  logprob: number;
}

/** The probe's three answers for one prompt: the top logprobs of the first generated position. */
export interface ProbeObservation {
  /** Temperature 1, nothing truncated: the model's own distribution, in either mode. */
  plain: readonly TopLogprob[];
  /** Temperature PROBE_TEMPERATURE, nothing truncated. */
  tempered: readonly TopLogprob[];
  /** Temperature 1, top-k PROBE_TOP_K. */
  truncated: readonly TopLogprob[];
}

/** Whether the server's logprobs reflect a sampling step: measured, not assumed. */
export type Verdict = 'applied' | 'ignored' | 'undecided';

export interface ServedLogprobs {
  /** Temperature (and, by the servers' source, penalties) reshape the returned logprobs. */
  temperature: Verdict;
  /** Top-k (and, by the servers' source, top-p and min-p) renormalise the returned logprobs. */
  truncation: Verdict;
  /** The numbers behind the verdicts, for the log and for error messages. */
  evidence: string;
}

export const PROBE_TEMPERATURE = 0.25;
export const PROBE_TOP_K = 2;
/** Logprob gaps below this are float noise (a bf16 logit near 1 has a step of 2^-7): no evidence either way. */
const MIN_GAP = 1e-3;
/** Renormalising moves a logprob by −log(kept mass); under this the top-k tokens already hold all the mass. */
const MIN_CUT_SHIFT = 0.01;
/** Logprobs this close are one logit, tied: log_softmax of equal float logits gives equal floats. */
const TIE = 1e-6;

/**
 * Judges what a server's logprobs are of from the probe's answers. Processed logprobs are
 * log softmax(z / T) over what truncation kept, raw ones log softmax(z) whatever was asked; so
 * - at temperature T the gap between two tokens' logprobs is (z_i − z_j) / T: ×1/T against T = 1 when temperature is
 *   applied, ×1 when not. A near-uniform model (a random-weight one) has small gaps, but their ratio is exact;
 *   only a flat top (every gap under MIN_GAP) says nothing.
 * - with top-k 2 the most probable token's logprob rises by −log(mass kept) when truncation renormalises, and stays
 *   when not: about 11 nats for a random model; a model so peaked that the top two hold everything says nothing.
 * Every prompt with evidence must agree; none, or a disagreement, is `undecided`.
 */
export function judgeServedLogprobs(observations: readonly ProbeObservation[]): ServedLogprobs {
  const ratios = observations.map(gapRatio).filter((r): r is number => r !== undefined);
  const shifts = observations.map(truncationShift).filter((m): m is { expected: number; measured: number } => m !== undefined);
  const temperature = agreed(ratios.map(temperatureVerdict));
  const truncation = agreed(shifts.map(truncationVerdict));
  const gaps = ratios.length === 0 ? 'no gap to measure' : `gaps ×${ratios.map((r) => r.toFixed(3)).join(', ×')}`;
  const kept =
    shifts.length === 0
      ? 'the kept tokens hold all the mass'
      : `top logprob moved ${shifts.map((m) => `${m.measured.toFixed(3)} of ${m.expected.toFixed(3)}`).join(', ')}`;
  return {
    temperature,
    truncation,
    evidence:
      `at temperature ${PROBE_TEMPERATURE}: ${gaps} (processed ×${1 / PROBE_TEMPERATURE}, raw ×1); ` +
      `at top-k ${PROBE_TOP_K}: ${kept} (processed all of it, raw none)`,
  };
}

/** Least squares of the tempered gaps on the plain ones, over the tokens both answers rank. */
function gapRatio(observation: ProbeObservation): number | undefined {
  const top = observation.plain[0];
  const temperedTop = top && observation.tempered.find((t) => t.id === top.id);
  if (!top || !temperedTop) return undefined;
  let products = 0;
  let squares = 0;
  let widest = 0;
  for (const candidate of observation.plain.slice(1)) {
    const tempered = observation.tempered.find((t) => t.id === candidate.id);
    if (!tempered || !usable(candidate.logprob) || !usable(tempered.logprob)) continue;
    const gap = top.logprob - candidate.logprob;
    products += gap * (temperedTop.logprob - tempered.logprob);
    squares += gap * gap;
    widest = Math.max(widest, gap);
  }
  return widest < MIN_GAP ? undefined : products / squares;
}

function temperatureVerdict(ratio: number): Verdict {
  const processed = 1 / PROBE_TEMPERATURE;
  // Halfway between the two answers and beyond either is neither: a server doing something else.
  const tolerance = (processed - 1) / 3;
  if (Math.abs(ratio - processed) <= tolerance) return 'applied';
  if (Math.abs(ratio - 1) <= tolerance) return 'ignored';
  return 'undecided';
}

/**
 * How far truncation moved the most probable token's logprob, and how far renormalising would move it: −log of the
 * untruncated mass top-k keeps. Top-k keeps every token tied with the k-th (bf16 logits of a near-uniform model tie
 * often), so the kept set is read from the plain answer, ties included; a tie running past its end says nothing.
 */
function truncationShift(observation: ProbeObservation): { expected: number; measured: number } | undefined {
  const { plain } = observation;
  const top = plain[0];
  const kth = plain[PROBE_TOP_K - 1];
  const truncatedTop = top && observation.truncated.find((t) => t.id === top.id);
  if (!top || !kth || !truncatedTop || !usable(truncatedTop.logprob)) return undefined;
  const kept = plain.filter((t) => t.logprob >= kth.logprob - TIE);
  if (kept.length === plain.length) return undefined;
  const expected = -Math.log(kept.reduce((sum, t) => sum + Math.exp(t.logprob), 0));
  if (expected < MIN_CUT_SHIFT) return undefined;
  return { expected, measured: truncatedTop.logprob - top.logprob };
}

function truncationVerdict(shift: { expected: number; measured: number }): Verdict {
  const tolerance = shift.expected / 4;
  if (Math.abs(shift.measured - shift.expected) <= tolerance) return 'applied';
  if (Math.abs(shift.measured) <= tolerance) return 'ignored';
  return 'undecided';
}

function agreed(verdicts: readonly Verdict[]): Verdict {
  const first = verdicts[0];
  return first !== undefined && verdicts.every((v) => v === first) ? first : 'undecided';
}

/** vLLM reports a masked token as −9999 (its floor for −inf); such an entry has no gap to measure. */
function usable(logprob: number): boolean {
  return Number.isFinite(logprob) && logprob > -9000;
}
