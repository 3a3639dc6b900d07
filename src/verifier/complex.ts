/** Complex arithmetic in doubles, enough to evaluate answers such as `3+4i` or `e^{i\pi/3}`. */
export interface Complex {
  re: number;
  im: number;
}

// -0 would flip the branch of log and sqrt: sqrt(-1) must be i, not -i.
export const complex = (re: number, im = 0): Complex => ({ re: re === 0 ? 0 : re, im: im === 0 ? 0 : im });
export const isReal = (z: Complex): boolean => z.im === 0;
export const magnitude = (z: Complex): number => Math.hypot(z.re, z.im);
export const isFiniteComplex = (z: Complex): boolean => Number.isFinite(z.re) && Number.isFinite(z.im);

export const add = (a: Complex, b: Complex): Complex => complex(a.re + b.re, a.im + b.im);
export const sub = (a: Complex, b: Complex): Complex => complex(a.re - b.re, a.im - b.im);
export const neg = (a: Complex): Complex => complex(-a.re, -a.im);

export function mul(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) return complex(a.re * b.re);
  return complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

export function div(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0) return complex(a.re / b.re);
  const d = b.re * b.re + b.im * b.im;
  return complex((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}

export function exp(a: Complex): Complex {
  const r = Math.exp(a.re);
  return a.im === 0 ? complex(r) : complex(r * Math.cos(a.im), r * Math.sin(a.im));
}

export function log(a: Complex): Complex {
  if (a.im === 0 && a.re > 0) return complex(Math.log(a.re));
  return complex(Math.log(magnitude(a)), Math.atan2(a.im, a.re));
}

export function pow(a: Complex, b: Complex): Complex {
  if (a.im === 0 && b.im === 0 && (a.re >= 0 || Number.isInteger(b.re))) return complex(Math.pow(a.re, b.re));
  if (a.re === 0 && a.im === 0) return complex(0);
  const odd = a.im === 0 && b.im === 0 ? oddDenominator(b.re) : null;
  // Real-root convention for a negative base: x^{2/3} = (∛x)², as \sqrt[3]{x}^2 reads.
  if (odd !== null) return complex((odd.numerator % 2 === 0 ? 1 : -1) * Math.pow(-a.re, b.re));
  if (b.im === 0 && Number.isInteger(b.re) && Math.abs(b.re) <= 64) {
    let result = complex(1);
    for (let k = 0; k < Math.abs(b.re); k++) result = mul(result, a);
    return b.re < 0 ? div(complex(1), result) : result;
  }
  return exp(mul(b, log(a)));
}

function oddDenominator(exponent: number): { numerator: number } | null {
  for (const q of [3, 5, 7, 9]) {
    const p = Math.round(exponent * q);
    if (Math.abs(exponent * q - p) < 1e-12) return { numerator: Math.abs(p) };
  }
  return null;
}

/** The n-th root, real for a negative radicand and odd n (`\sqrt[3]{-8} = -2`). */
export function root(a: Complex, n: number): Complex {
  if (a.im === 0 && a.re < 0 && Number.isInteger(n) && n % 2 === 1) return complex(-Math.pow(-a.re, 1 / n));
  if (a.im === 0 && a.re >= 0) return complex(Math.pow(a.re, 1 / n));
  return pow(a, complex(1 / n));
}

export function sin(a: Complex): Complex {
  return a.im === 0 ? complex(Math.sin(a.re)) : complex(Math.sin(a.re) * Math.cosh(a.im), Math.cos(a.re) * Math.sinh(a.im));
}

export function cos(a: Complex): Complex {
  return a.im === 0 ? complex(Math.cos(a.re)) : complex(Math.cos(a.re) * Math.cosh(a.im), -Math.sin(a.re) * Math.sinh(a.im));
}

/** Applies a real function, refusing complex arguments it has no definition for. */
export function realOnly(a: Complex, f: (x: number) => number): Complex {
  if (a.im !== 0) return complex(Number.NaN);
  return complex(f(a.re));
}
