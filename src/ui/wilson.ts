/**
 * The Wilson score interval of a rate: `successes` of `n`, at 95% (z = 1.96). Unlike p ± z·√(p(1−p)/n) it stays in
 * [0, 1] and is not zero-wide at 0% or 100%, so a rate over few samples shows how little it says. Null when n is 0.
 */
export function wilsonInterval(successes: number, n: number, z = 1.96): { low: number; high: number } | null {
  if (!(n > 0)) return null;
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** What the pages call the band, named where it is drawn. */
export const WILSON_NAME = 'Wilson 95% interval';
