/**
 * A seeded pseudo-random generator: sfc32 seeded through splitmix32.
 * Hand-written on purpose: layout sets and bootstraps must be byte-identical on every machine
 * and JS engine for a given seed, which rules out Math.random and any library whose algorithm
 * may change between versions. sfc32 passes PractRand to 2^40+ bytes and is 15 lines.
 */
export interface Rng {
  /** Uniform in [0, 1), 32 bits of resolution. */
  next(): number;
  /** Uniform in [min, max). */
  uniform(min: number, max: number): number;
  /** Uniform integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** A new independent generator derived from this one (for per-layout or per-worker streams). */
  fork(): Rng;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** Seeds must be safe integers; the high and low 32-bit halves both feed the state. */
export function createRng(seed: number): Rng {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a whole number, not ${seed}`);
  const hi = Math.floor(seed / 0x100000000) >>> 0;
  const init = splitmix32((seed >>> 0) ^ Math.imul(hi, 0x27d4eb2d));
  let a = init();
  let b = init();
  let c = init();
  let d = init();
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 0x100000000;
  };
  for (let i = 0; i < 12; i++) next(); // discard the warm-up outputs
  const rng: Rng = {
    next,
    uniform: (min, max) => min + (max - min) * next(),
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    normal: () => {
      const u = 1 - next();
      const v = next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
    fork: () => createRng(Math.floor(next() * 0x1fffffffffffff)),
  };
  return rng;
}
