/**
 * mulberry32: a small seeded generator, so a graded code policy misses the same way for the same
 * seed. The project's generator (src/layouts/random.ts createRng) is out of this room's reach:
 * src/policy may import only the rig and policy contracts and src/rig.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
