/** `0.\overline{3}`, `0.1\overline{6}`, `1.\overline{09}`, `0.\dot{3}`: a repeating decimal. */
const REPEATING = /(-?)(\d*)\.(\d*)\\(?:overline|dot)\s*\{\s*(\d{1,12})\s*\}|(-?)(\d*)\.(\d*)\\dot\s*(\d)/g;

/**
 * Rewrites repeating decimals as the exact fraction they denote (`0.1\overline{6}` → `\frac{1}{6}`
 * in lowest terms), so they compare as exact values, not as the truncated decimal.
 */
export function repeatingDecimalsAsFractions(latex: string): string {
  if (!/\\(?:overline|dot)/.test(latex)) return latex;
  return latex.replace(REPEATING, (_all, s1?: string, w1?: string, f1?: string, r1?: string, s2?: string, w2?: string, f2?: string, r2?: string) => {
    const sign = s1 ?? s2 ?? '';
    const whole = w1 ?? w2 ?? '';
    const fixed = f1 ?? f2 ?? '';
    const repeat = r1 ?? r2 ?? '';
    // x = whole.fixed(repeat)… = (whole·fixed·repeat − whole·fixed) / (10^|fixed| · (10^|repeat| − 1))
    const nines = 10n ** BigInt(repeat.length) - 1n;
    const shift = 10n ** BigInt(fixed.length);
    const head = BigInt(`${whole || '0'}${fixed}`);
    let num = head * nines + BigInt(repeat);
    let den = shift * nines;
    const d = gcd(num, den);
    num /= d;
    den /= d;
    return den === 1n ? `${sign}${num}` : `${sign}\\frac{${num}}{${den}}`;
  });
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a < 0n ? -a : a, b];
  while (y !== 0n) [x, y] = [y, x % y];
  return x === 0n ? 1n : x;
}
