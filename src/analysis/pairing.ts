/**
 * Sim–real pairing: one {policy, sim, real} entry per policy from per-layout results, the input
 * of Pearson r and MMRV. Both numbers are means over layouts (each layout once, its rollouts
 * averaged first) and, by default, over the same layouts — a layout counts only when the policy
 * ran on it both in sim and on the real rig, so the two numbers describe the same initial conditions.
 */
import type { PolicyPair } from './correlation.js';

export interface PolicyLayoutResult {
  readonly policy: string;
  readonly kind: 'sim' | 'real';
  /** Identifies the layout across sim and real, e.g. `${layoutSetSha256}:${layoutIndex}`. */
  readonly layout: string;
  /** Mean task progress of the policy's rollouts on this layout, in [0, 1]. */
  readonly meanProgress: number;
}

export interface PairedPolicy extends PolicyPair {
  /** Layouts behind the sim and the real number (equal when pairing on shared layouts). */
  readonly simLayouts: number;
  readonly realLayouts: number;
}

export interface Pairing {
  /** In order of first appearance. */
  readonly pairs: PairedPolicy[];
  /** Policies with results that could not be paired (only sim, only real, or no shared layout). */
  readonly unpaired: string[];
}

export function pairSimReal(
  results: readonly PolicyLayoutResult[],
  options: { readonly sharedLayoutsOnly?: boolean } = {},
): Pairing {
  const sharedOnly = options.sharedLayoutsOnly ?? true;
  const byPolicy = new Map<string, { sim: Map<string, number>; real: Map<string, number> }>();
  for (const r of results) {
    if (!(r.meanProgress >= 0 && r.meanProgress <= 1))
      throw new RangeError(
        `policy '${r.policy}' has mean progress ${r.meanProgress} on layout ${r.layout}; it must lie in [0, 1]`,
      );
    let entry = byPolicy.get(r.policy);
    if (!entry) {
      entry = { sim: new Map(), real: new Map() };
      byPolicy.set(r.policy, entry);
    }
    const side = entry[r.kind];
    if (side.has(r.layout))
      throw new RangeError(
        `policy '${r.policy}' has two ${r.kind} results for layout ${r.layout}; aggregate per layout first`,
      );
    side.set(r.layout, r.meanProgress);
  }
  const pairs: PairedPolicy[] = [];
  const unpaired: string[] = [];
  for (const [policy, { sim, real }] of byPolicy) {
    const keep = (side: Map<string, number>, other: Map<string, number>): number[] =>
      [...side].filter(([layout]) => !sharedOnly || other.has(layout)).map(([, v]) => v);
    const simValues = keep(sim, real);
    const realValues = keep(real, sim);
    if (simValues.length === 0 || realValues.length === 0) {
      unpaired.push(policy);
      continue;
    }
    const mean = (xs: number[]): number => Math.min(1, xs.reduce((a, b) => a + b, 0) / xs.length);
    pairs.push({
      policy,
      sim: mean(simValues),
      real: mean(realValues),
      simLayouts: simValues.length,
      realLayouts: realValues.length,
    });
  }
  return { pairs, unpaired };
}
