/** Lanczos coefficients (g = 7, n = 9): about 15 significant digits for real arguments. */
const G = 7;
const COEFFICIENTS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

/**
 * Γ(x) for real x, so that `n!` and `\binom{n}{k}` have values at the non-integer points where
 * identities are tested (`\binom{2n}{n} = \frac{(2n)!}{(n!)^2}`). NaN at the poles (0, −1, −2 …).
 */
export function gamma(x: number): number {
  if (Number.isInteger(x) && x <= 0) return Number.NaN;
  // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x));
  const z = x - 1;
  let sum = COEFFICIENTS[0]!;
  for (let k = 1; k < G + 2; k++) sum += COEFFICIENTS[k]! / (z + k);
  const t = z + G + 0.5;
  return Math.sqrt(2 * Math.PI) * t ** (z + 0.5) * Math.exp(-t) * sum;
}
