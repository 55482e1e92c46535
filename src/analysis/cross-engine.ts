/**
 * Cross-engine agreement: when the same policies were swept on the same layout set by two physics
 * engines (Rapier and MuJoCo), does the sim's verdict survive the change of engine? Per policy and
 * tier, the progress on each engine (and on the real rig); per tier, the engines' Pearson r and
 * MMRV against each other and each engine's against real; and every pair of policies the two
 * engines order differently, with how the real rig orders it. Pure, like the paired report it
 * sits beside: the app says which sim calibration ran on which engine.
 *
 * Layouts: the engines are compared over the layouts both ran for that policy (repeats averaged per
 * layout, each layout once), so both numbers describe the same initial conditions; an engine
 * against real over the layouts all three ran, so both engines meet real on the same layouts.
 */
import { mmrv, pearson, type PearsonResult, type PolicyPair } from './correlation.js';

/** What cross-engine agreement needs of a stored rollout (a ReportRollout has all of it). */
export interface CrossEngineRollout {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  readonly policy: string;
  readonly layoutIndex: number;
  readonly status: 'valid' | 'invalid' | 'aborted';
  readonly progress: number | null;
  readonly calibration: string;
  readonly episodeSeconds: number;
}

/** One engine's side: its name as the sim calibration record says it, and the record's hash its rollouts stored. */
export interface EngineSide {
  readonly engine: string;
  readonly calibration: string;
}

export interface CrossEngineInput {
  /** The layout set's layouts, by index (only the tier is read). */
  readonly layouts: readonly { readonly tier: number }[];
  readonly policies: readonly { readonly key: string; readonly label: string }[];
  readonly rollouts: readonly CrossEngineRollout[];
  /** The two engines, in the order shown; the first is the reference MMRV measures the second's order against. */
  readonly engines: readonly [EngineSide, EngineSide];
  /** The real side's calibration set the paired report compares (null: no real rollout is counted). */
  readonly realCalibration: string | null;
  /** The one episode length compared (null: every length; the paired report never passes null with rollouts of two lengths). */
  readonly episodeSeconds: number | null;
}

/** One side's progress for one policy and tier: mean over layouts (repeats averaged first), with the rollouts behind it. */
export interface SideProgress {
  readonly progress: number;
  readonly layouts: number;
  readonly rolloutIds: readonly number[];
}

export interface CrossEngineProgressRow {
  readonly policy: string;
  readonly tier: number | 'all';
  /** Each engine over the layouts both engines ran (null: the engines share no layout of this tier for this policy). */
  readonly engines: readonly [SideProgress, SideProgress] | null;
  /** Real over the layouts all three ran (null: none). */
  readonly real: SideProgress | null;
}

/** How well `of` orders the policies as `against` does: `pairs` in correlation.ts's terms (sim = of, real = against). */
export interface EngineAgreement {
  readonly of: string;
  readonly against: string;
  readonly pairs: readonly (PolicyPair & { readonly layouts: number })[];
  /** Null with `unavailable` when fewer than MIN_POLICIES_FOR_AGREEMENT policies have both sides. */
  readonly pearson: PearsonResult | null;
  readonly mmrv: number | null;
  readonly unavailable?: string;
}

/** A pair of policies the two engines order differently (a tie on one and an order on the other counts, as in MMRV). */
export interface EngineOrderDisagreement {
  readonly a: string;
  readonly b: string;
  /** a's and b's progress on each engine, over the layouts both engines ran. */
  readonly engines: readonly [{ readonly a: number; readonly b: number }, { readonly a: number; readonly b: number }];
  /** a's and b's real progress (over the layouts all three ran), when both have it. */
  readonly real: { readonly a: number; readonly b: number } | null;
  /** Which engine orders the pair as the real rig does: an engine name, 'neither' (real ties them), or null without real. */
  readonly realSidesWith: string | null;
}

export interface CrossEngineTier {
  readonly tier: number | 'all';
  /** The second engine against the first. */
  readonly engines: EngineAgreement;
  /** Each engine against real, in the engines' order. */
  readonly real: readonly [EngineAgreement, EngineAgreement];
  readonly orderedDifferently: readonly EngineOrderDisagreement[];
}

export interface CrossEngineReport {
  readonly engines: readonly [EngineSide, EngineSide];
  readonly progress: readonly CrossEngineProgressRow[];
  readonly tiers: readonly CrossEngineTier[];
  /** The overall verdict in one sentence: do the engines agree on the order of these policies? */
  readonly sentence: string;
}

/** As for sim against real: r and MMRV over fewer policies say nothing. */
export const MIN_POLICIES_FOR_AGREEMENT = 3;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

type LayoutMeans = Map<number, { mean: number; ids: number[] }>;

/** Per policy and side ('real', or an engine's calibration): per layout, the mean of its counted rollouts. */
function layoutMeans(input: CrossEngineInput): Map<string, Map<string, LayoutMeans>> {
  const sides = new Set(input.engines.map((e) => e.calibration));
  const raw = new Map<string, Map<string, Map<number, { sum: number; ids: number[] }>>>();
  for (const r of input.rollouts) {
    if (r.status !== 'valid' || r.progress === null) continue;
    if (input.episodeSeconds !== null && r.episodeSeconds !== input.episodeSeconds) continue;
    let side: string;
    if (r.kind === 'real') {
      if (input.realCalibration === null || r.calibration !== input.realCalibration) continue;
      side = 'real';
    } else {
      if (!sides.has(r.calibration)) continue;
      side = r.calibration;
    }
    let bySide = raw.get(r.policy);
    if (!bySide) raw.set(r.policy, (bySide = new Map()));
    let byLayout = bySide.get(side);
    if (!byLayout) bySide.set(side, (byLayout = new Map()));
    const cell = byLayout.get(r.layoutIndex) ?? { sum: 0, ids: [] };
    cell.sum += r.progress;
    cell.ids.push(r.id);
    byLayout.set(r.layoutIndex, cell);
  }
  const out = new Map<string, Map<string, LayoutMeans>>();
  for (const [policy, bySide] of raw) {
    const m = new Map<string, LayoutMeans>();
    for (const [side, byLayout] of bySide)
      m.set(side, new Map([...byLayout].map(([i, c]) => [i, { mean: c.sum / c.ids.length, ids: c.ids }])));
    out.set(policy, m);
  }
  return out;
}

function sideOver(means: LayoutMeans | undefined, layouts: readonly number[]): SideProgress | null {
  if (!means || layouts.length === 0) return null;
  const cells = layouts.map((i) => means.get(i)!);
  return { progress: mean(cells.map((c) => c.mean)), layouts: layouts.length, rolloutIds: cells.flatMap((c) => c.ids) };
}

function agreement(
  of: string,
  against: string,
  pairs: readonly (PolicyPair & { readonly layouts: number })[],
): EngineAgreement {
  if (pairs.length < MIN_POLICIES_FOR_AGREEMENT) {
    const who =
      pairs.length === 0
        ? 'none has'
        : `only ${pairs.map((p) => p.policy).join(', ')} ${pairs.length === 1 ? 'has' : 'have'}`;
    return {
      of,
      against,
      pairs,
      pearson: null,
      mmrv: null,
      unavailable: `needs at least ${MIN_POLICIES_FOR_AGREEMENT} policies with results on both ${of} and ${against}; ${who} them`,
    };
  }
  return { of, against, pairs, pearson: pearson(pairs), mmrv: mmrv(pairs) };
}

const orderOf = (a: number, b: number): number => Math.sign(a - b);

export function crossEngineAgreement(input: CrossEngineInput): CrossEngineReport {
  const [first, second] = input.engines;
  if (first.calibration === second.calibration)
    throw new RangeError('cross-engine agreement needs two different sim calibrations, one per engine');
  const means = layoutMeans(input);
  const tiers: (number | 'all')[] = [...new Set(input.layouts.map((l) => l.tier))].sort((a, b) => a - b);
  tiers.push('all');
  const inTier =
    (tier: number | 'all') =>
    (i: number): boolean =>
      tier === 'all' || input.layouts[i]?.tier === tier;
  // Per policy in the order given, its tiers in order: the way the report's tables read.
  const progress = new Map<string, CrossEngineProgressRow[]>(input.policies.map((p) => [p.key, []]));
  const tierReports: CrossEngineTier[] = [];
  for (const tier of tiers) {
    const enginePairs: (PolicyPair & { layouts: number })[] = [];
    const realPairs: [(PolicyPair & { layouts: number })[], (PolicyPair & { layouts: number })[]] = [[], []];
    for (const p of input.policies) {
      const mine = means.get(p.key);
      const a = mine?.get(first.calibration);
      const b = mine?.get(second.calibration);
      const real = mine?.get('real');
      const both = a && b ? [...a.keys()].filter((i) => b.has(i) && inTier(tier)(i)).sort((x, y) => x - y) : [];
      const all3 = real ? both.filter((i) => real.has(i)) : [];
      const ea = sideOver(a, both);
      const eb = sideOver(b, both);
      const row: CrossEngineProgressRow = {
        policy: p.label,
        tier,
        engines: ea && eb ? [ea, eb] : null,
        real: sideOver(real, all3),
      };
      if (row.engines || row.real) progress.get(p.key)!.push(row);
      if (ea && eb) enginePairs.push({ policy: p.label, sim: eb.progress, real: ea.progress, layouts: both.length });
      if (all3.length > 0) {
        const r = sideOver(real, all3)!.progress;
        realPairs[0].push({ policy: p.label, sim: sideOver(a, all3)!.progress, real: r, layouts: all3.length });
        realPairs[1].push({ policy: p.label, sim: sideOver(b, all3)!.progress, real: r, layouts: all3.length });
      }
    }
    if (enginePairs.length === 0 && realPairs[0].length === 0) continue;
    const realOf = new Map(realPairs[0].map((x) => [x.policy, x.real]));
    const orderedDifferently: EngineOrderDisagreement[] = [];
    for (let i = 0; i < enginePairs.length; i++) {
      for (let j = i + 1; j < enginePairs.length; j++) {
        const x = enginePairs[i];
        const y = enginePairs[j];
        const onFirst = orderOf(x.real, y.real);
        const onSecond = orderOf(x.sim, y.sim);
        if (onFirst === onSecond) continue;
        const ra = realOf.get(x.policy);
        const rb = realOf.get(y.policy);
        const real = ra !== undefined && rb !== undefined ? { a: ra, b: rb } : null;
        const realOrder = real ? orderOf(real.a, real.b) : null;
        orderedDifferently.push({
          a: x.policy,
          b: y.policy,
          engines: [
            { a: x.real, b: y.real },
            { a: x.sim, b: y.sim },
          ],
          real,
          realSidesWith:
            realOrder === null
              ? null
              : realOrder === onFirst
                ? first.engine
                : realOrder === onSecond
                  ? second.engine
                  : 'neither',
        });
      }
    }
    tierReports.push({
      tier,
      engines: agreement(second.engine, first.engine, enginePairs),
      real: [agreement(first.engine, 'real', realPairs[0]), agreement(second.engine, 'real', realPairs[1])],
      orderedDifferently,
    });
  }
  return {
    engines: input.engines,
    progress: [...progress.values()].flat(),
    tiers: tierReports,
    sentence: verdictSentence(
      input.engines,
      tierReports.find((t) => t.tier === 'all'),
    ),
  };
}

function verdictSentence(engines: readonly [EngineSide, EngineSide], all: CrossEngineTier | undefined): string {
  const [a, b] = engines.map((e) => e.engine);
  if (!all || all.engines.pairs.length === 0)
    return `No policy has results on both ${a} and ${b} on the same layouts: the engines cannot be compared.`;
  const n = all.engines.pairs.length;
  const d = all.orderedDifferently;
  if (d.length === 0)
    return n === 1
      ? `Only one policy ran on both ${a} and ${b}: there is no order to compare.`
      : `${a} and ${b} order all ${n} policies the same way.`;
  const named = d.map((x) => `${x.a} and ${x.b}`).join('; ');
  return `${a} and ${b} order ${d.length} pair${d.length === 1 ? '' : 's'} of the ${n} policies differently (${named}): where they disagree, the sim's verdict depends on the engine.`;
}
