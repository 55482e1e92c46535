/**
 * The paired sim/real report's data: every number `tandem report` prints, draws and writes as
 * JSON, computed from plain rollout rows (the app reads them from the store), each traceable to
 * the rollout ids behind it. Pure: the station UI's compare view can call the same function.
 *
 * Pairing: a real rollout pairs with the sim rollouts of the same policy (spec + checkpoint),
 * layout set and layout index, run with one sim calibration and the same episode length.
 * Nothing is pooled silently: unscored real rollouts, invalid/aborted ones, other calibrations,
 * other episode lengths and unpaired policies are listed with the reason, and a comparison that
 * cannot be made says why instead of a number.
 */
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { targetRegion } from '../tasks/failure-patterns.js';
import { placementCovariate } from './placement-covariate.js';
import { throughputSummary, type ThroughputSummary, type TimedRollout } from './object-times.js';
import { createRng } from '../layouts/random.js';
import { quantileSorted } from './bootstrap.js';
import { mmrv, pearson, type PolicyPair } from './correlation.js';
import { summarizeByTier } from './tier-summary.js';
import { controlVariateMean, type ControlVariateEstimate } from './control-variate.js';
import { sequentialVerdict } from './sequential.js';
import { costLedger, DEFAULT_COST_CONFIG, type CostConfig } from './cost.js';
import {
  ReportInputError,
  type ReportRollout,
  type ReportInput,
  type ReportChoices,
  type LayoutPair,
  type SideSummary,
  type PolicyReport,
  type RankViolation,
  type CorrelationReport,
  type AbComparison,
  type PairedReport,
  type CostCurvePoint,
} from './paired-report-types.js';
import { failureBreakdown } from './failure-breakdown.js';

export * from './paired-report-types.js';

export const MIN_POLICIES_FOR_CORRELATION = 3;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const short = (h: string): string => (h === '' ? 'none' : `${h.slice(0, 12)}…`);

const seconds = (s: number): string => `${Number(s.toFixed(3))} s`;

function reportChoices(valid: readonly ReportRollout[], sameCalibration: readonly ReportRollout[]): ReportChoices {
  const calibrations = (kind: 'sim' | 'real') => {
    const n = new Map<string, number>();
    for (const r of valid) if (r.kind === kind) n.set(r.calibration, (n.get(r.calibration) ?? 0) + 1);
    return [...n].map(([value, rollouts]) => ({ value, rollouts }));
  };
  const lengths = new Map<number, { sim: number; real: number }>();
  for (const r of sameCalibration) {
    const e = lengths.get(r.episodeSeconds) ?? { sim: 0, real: 0 };
    e[r.kind] += 1;
    lengths.set(r.episodeSeconds, e);
  }
  const episodeSeconds = [...lengths].sort((a, b) => a[0] - b[0]).map(([value, n]) => ({ value, ...n }));
  return { simCalibrations: calibrations('sim'), realCalibrations: calibrations('real'), episodeSeconds };
}

/** At most this many calibrations are named in a sentence; the rest are counted (the choices list has them all). */
const NAMED_CALIBRATIONS = 4;

/** Short hashes, the most-used first, the first few named and the rest counted: "a…, b… and 70 more". */
function someCalibrations(hashes: readonly string[], rows: readonly ReportRollout[], kind: 'sim' | 'real'): string {
  const uses = new Map<string, number>();
  for (const r of rows) if (r.kind === kind) uses.set(r.calibration, (uses.get(r.calibration) ?? 0) + 1);
  const ordered = [...hashes].sort((a, b) => (uses.get(b) ?? 0) - (uses.get(a) ?? 0));
  const named = ordered.slice(0, NAMED_CALIBRATIONS).map(short).join(', ');
  return ordered.length > NAMED_CALIBRATIONS ? `${named} and ${ordered.length - NAMED_CALIBRATIONS} more` : named;
}

/** The calibration to use for one side: the one given, or the only one present; refuses a mix. */
function pickCalibration(
  rows: readonly ReportRollout[],
  kind: 'sim' | 'real',
  asked: string | undefined,
): string | null {
  const present = [...new Set(rows.filter((r) => r.kind === kind).map((r) => r.calibration))];
  if (asked !== undefined) {
    if (!present.includes(asked))
      throw new ReportInputError(
        `No ${kind} rollout of these policies ran with calibration ${short(asked)}; present: ${someCalibrations(present, rows, kind) || 'none'}.`,
        reportChoices(rows, rows),
      );
    return asked;
  }
  if (present.length > 1) {
    const flag = kind === 'sim' ? '--sim-calibration' : '--real-calibration';
    throw new ReportInputError(
      `The ${kind} rollouts of these policies ran with ${present.length} different calibrations (${someCalibrations(present, rows, kind)}); one comparison uses one: pick it with ${flag} SHA256.`,
      reportChoices(rows, rows),
    );
  }
  return present[0] ?? null;
}

/**
 * The episode length compared: the one given, or the only one present; refuses a mix. Both
 * sides must share it — a rollout of another length is a different task (more time to finish,
 * other failures), so a 60 s sweep never pairs with 12 s real rollouts.
 */
function pickEpisodeSeconds(choices: ReportChoices, asked: number | undefined): number | null {
  const present = choices.episodeSeconds;
  const which = (e: ReportChoices['episodeSeconds'][number]): string =>
    `${seconds(e.value)}: ${[e.sim ? `${e.sim} sim` : '', e.real ? `${e.real} real` : ''].filter(Boolean).join(', ')}`;
  if (asked !== undefined) {
    if (!present.some((e) => e.value === asked))
      throw new ReportInputError(
        `No rollout of these policies ran ${seconds(asked)} episodes; present: ${present.map(which).join('; ') || 'none'}.`,
        choices,
      );
    return asked;
  }
  if (present.length > 1) {
    throw new ReportInputError(
      `The rollouts of these policies ran with ${present.length} different episode lengths (${present.map(which).join('; ')}); one comparison uses one: pick it with --episode-seconds S.`,
      choices,
    );
  }
  return present[0]?.value ?? null;
}

/** The one sentence of what was left out for its episode length, and why. */
function otherEpisodeLengthSentence(left: readonly ReportRollout[], compared: number | null): string | null {
  if (left.length === 0 || compared === null) return null;
  const groups = new Map<string, number[]>();
  for (const r of left) {
    const k = `${r.kind} rollout(s) of ${seconds(r.episodeSeconds)}`;
    groups.set(k, [...(groups.get(k) ?? []), r.id]);
  }
  const parts = [...groups].map(
    ([k, ids]) => `${ids.length} ${k} (${ids.slice(0, 12).join(', ')}${ids.length > 12 ? ', …' : ''})`,
  );
  return `Left out: ${parts.join(' and ')}, because this comparison is of ${seconds(compared)} episodes and results of different episode lengths are never pooled.`;
}

function tierSummary(rows: readonly ReportRollout[], seed: number): SideSummary | null {
  if (rows.length === 0) return null;
  return {
    tiers: summarizeByTier(
      rows.map((r) => ({ tier: r.tier, progress: r.progress!, layoutIndex: r.layoutIndex })),
      { seed },
    ),
    rolloutIds: rows.map((r) => r.id),
  };
}

export function buildPairedReport(input: ReportInput): PairedReport {
  const seed = input.seed ?? 1;
  const resamples = input.resamples ?? 4000;
  const costConfig: CostConfig = { ...DEFAULT_COST_CONFIG, ...input.cost };
  const keys = new Set(input.policies.map((p) => p.key));
  if (input.policies.length === 0) throw new ReportInputError('Name at least one policy for the report.');
  const rows = input.rollouts.filter((r) => keys.has(r.policy));
  const layoutCount = input.layoutSet.layouts.length;
  for (const r of rows) {
    if (!(r.layoutIndex >= 0 && r.layoutIndex < layoutCount))
      throw new ReportInputError(
        `Rollout ${r.id} names layout ${r.layoutIndex}, which layout set ${short(input.layoutSet.sha256)} does not have (0 to ${layoutCount - 1}).`,
      );
  }
  const invalidOrAborted = rows.filter((r) => r.status !== 'valid');
  const valid = rows.filter((r) => r.status === 'valid');
  const simCalibration = pickCalibration(valid, 'sim', input.simCalibration);
  const realCalibration = pickCalibration(valid, 'real', input.realCalibration);
  const otherCalibration = valid.filter((r) => r.calibration !== (r.kind === 'sim' ? simCalibration : realCalibration));
  const inCalibration = valid.filter((r) => r.calibration === (r.kind === 'sim' ? simCalibration : realCalibration));
  const choices = reportChoices(valid, inCalibration);
  const episodeSeconds = pickEpisodeSeconds(choices, input.episodeSeconds);
  const otherEpisodeLength = inCalibration.filter((r) => r.episodeSeconds !== episodeSeconds);
  const compared = inCalibration.filter((r) => r.episodeSeconds === episodeSeconds);
  const awaitingScore = compared.filter((r) => r.progress === null);
  const scored = compared.filter((r) => r.progress !== null);
  const scoredIds = new Set(scored.map((r) => r.id));

  const label = new Map(input.policies.map((p) => [p.key, p.label]));
  const policies: PolicyReport[] = [];
  const unpaired: { policy: string; reason: string }[] = [];
  for (const p of input.policies) {
    const mine = scored.filter((r) => r.policy === p.key);
    const byLayout = new Map<
      number,
      { sim: ReportRollout[]; real: ReportRollout[]; notCounted: LayoutPair['notCounted'][number][] }
    >();
    const entry = (i: number) => {
      let e = byLayout.get(i);
      if (!e) byLayout.set(i, (e = { sim: [], real: [], notCounted: [] }));
      return e;
    };
    for (const r of mine) entry(r.layoutIndex)[r.kind].push(r);
    for (const r of rows) {
      if (r.policy !== p.key || scoredIds.has(r.id)) continue;
      const why =
        r.status !== 'valid'
          ? `${r.status}: ${r.statusReason ?? r.outcome ?? r.status}`
          : r.calibration !== (r.kind === 'sim' ? simCalibration : realCalibration)
            ? `ran with another calibration (${short(r.calibration)})`
            : r.episodeSeconds !== episodeSeconds
              ? `ran ${seconds(r.episodeSeconds)} episodes, not this comparison's ${seconds(episodeSeconds ?? 0)}`
              : 'awaits an operator score';
      entry(r.layoutIndex).notCounted.push({ id: r.id, kind: r.kind, why });
    }
    const layouts: LayoutPair[] = [...byLayout.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([layoutIndex, e]) => ({
        layoutIndex,
        tier: input.layoutSet.layouts[layoutIndex].tier,
        sim: e.sim.length ? mean(e.sim.map((r) => r.progress!)) : null,
        simRolloutIds: e.sim.map((r) => r.id),
        real: e.real.length ? mean(e.real.map((r) => r.progress!)) : null,
        realRolloutIds: e.real.map((r) => r.id),
        notCounted: e.notCounted,
      }));
    const paired = layouts.filter((l) => l.sim !== null && l.real !== null);
    const pairedSet = new Set(paired.map((l) => l.layoutIndex));
    const realRows = mine.filter((r) => r.kind === 'real' && pairedSet.has(r.layoutIndex));
    const simRows = mine.filter((r) => r.kind === 'sim' && pairedSet.has(r.layoutIndex));
    const simAll = mine.filter((r) => r.kind === 'sim');
    if (paired.length === 0) {
      const hasSim = simAll.length > 0;
      const hasReal = mine.some((r) => r.kind === 'real');
      unpaired.push({
        policy: p.label,
        reason:
          !hasSim && !hasReal
            ? 'no scored rollouts on this layout set'
            : !hasSim
              ? 'real rollouts only, no sim sweep on this layout set'
              : !hasReal
                ? 'sim rollouts only, no scored real rollout'
                : 'its sim and real rollouts share no layout',
      });
    }
    let controlVariate: ControlVariateEstimate | null = null;
    let controlVariateUnavailable: string | undefined;
    if (paired.length >= 2) {
      const simOnly = layouts.filter((l) => l.sim !== null && l.real === null).map((l) => l.sim!);
      controlVariate = controlVariateMean(
        paired.map((l) => ({ real: l.real!, sim: l.sim! })),
        simOnly,
        { seed, resamples },
      );
    } else {
      controlVariateUnavailable = `needs at least 2 layouts with both real and sim results; ${p.label} has ${paired.length}`;
    }
    const realAll = mine.filter((r) => r.kind === 'real');
    const timed = (side: readonly ReportRollout[]): ThroughputSummary | null =>
      side.length
        ? throughputSummary(side.map((r) => timedRollout(input.task, input.layoutSet.layouts[r.layoutIndex], r)))
        : null;
    policies.push({
      key: p.key,
      label: p.label,
      spec: p.spec,
      checkpointSha256: p.checkpointSha256,
      layouts,
      pairedLayouts: paired.length,
      real: tierSummary(realRows, seed),
      sim: tierSummary(simRows, seed),
      simAllLayouts: tierSummary(simAll, seed),
      controlVariate,
      ...(controlVariateUnavailable ? { controlVariateUnavailable } : {}),
      cost: costLedger(
        realAll.map((r) => ({ id: r.id, durationS: r.durationS, operatorSeconds: r.operatorSeconds ?? null })),
        simAll.map((r) => ({ id: r.id, durationS: r.durationS })),
        costConfig,
        controlVariate?.equivalentRealLayouts ?? null,
        paired.length,
      ),
      throughput: { sim: timed(simAll), real: timed(realAll) },
      placement: placementCovariate(realAll),
    });
  }

  const pairedPolicies = policies.filter((p) => p.pairedLayouts > 0);
  let correlation: CorrelationReport | null = null;
  let correlationUnavailable: string | undefined;
  if (pairedPolicies.length < MIN_POLICIES_FOR_CORRELATION) {
    correlationUnavailable = `Correlating sim with real needs at least ${MIN_POLICIES_FOR_CORRELATION} policies with paired results; ${pairedPolicies.length === 0 ? 'none has' : `only ${pairedPolicies.map((p) => p.label).join(', ')} ${pairedPolicies.length === 1 ? 'has' : 'have'}`} them.`;
  } else {
    correlation = correlate(pairedPolicies, seed, resamples);
  }

  const failures = failureBreakdown(input.task, input.layoutSet.layouts, scored);
  return {
    task: input.task.id,
    layoutSet: input.layoutSet.sha256,
    simCalibration,
    realCalibration,
    episodeSeconds,
    choices,
    seed,
    policies,
    correlation,
    ...(correlationUnavailable ? { correlationUnavailable } : {}),
    abComparisons: abComparisons(pairedPolicies, scored, label),
    failures: {
      rows: failures.rows,
      outOfTime: failures.outOfTime,
      fromEndState: failures.fromEndState,
      notes: failures.notes,
    },
    cost: { config: costConfig, curve: costCurve(policies) },
    segregated: {
      awaitingScore: awaitingScore.map((r) => r.id),
      invalidOrAborted: invalidOrAborted.map((r) => ({
        id: r.id,
        kind: r.kind,
        policy: label.get(r.policy) ?? r.policy,
        status: r.status,
        reason: r.statusReason ?? r.outcome ?? r.status,
      })),
      otherCalibration: otherCalibration.map((r) => ({ id: r.id, kind: r.kind, calibration: r.calibration })),
      otherEpisodeLength: otherEpisodeLength.map((r) => ({ id: r.id, kind: r.kind, episodeSeconds: r.episodeSeconds })),
      otherEpisodeLengthSentence: otherEpisodeLengthSentence(otherEpisodeLength, episodeSeconds),
      unpairedPolicies: unpaired,
      simWithoutObjectCounts: failures.simLeftOut,
    },
  };
}

/** A scored rollout in the throughput's terms: its units, how many the score counts done, and where their times come from. */
function timedRollout(task: TaskDefinition, layout: Layout, r: ReportRollout): TimedRollout {
  const units = task.progressUnits(layout);
  const byId = new Map(layout.objects.map((o) => [o.id, o]));
  return {
    id: r.id,
    units,
    done: Math.round(r.progress! * units),
    episodeSeconds: r.episodeSeconds,
    taskEvents: r.taskEvents ?? null,
    doneMarks: r.doneMarks ?? null,
    targetRegionOf: (id) => {
      const o = byId.get(id);
      return o ? targetRegion(task, o) : undefined;
    },
    kindOf: (id) => byId.get(id)?.kind,
    assists: r.assists ?? 0,
  };
}

function pairedMeans(p: PolicyReport, draw?: readonly number[]): { sim: number; real: number; layouts: number } | null {
  const paired = p.layouts.filter((l) => l.sim !== null && l.real !== null);
  const byIndex = new Map(paired.map((l) => [l.layoutIndex, l]));
  const chosen = draw ? draw.map((i) => byIndex.get(i)).filter((l): l is LayoutPair => l !== undefined) : paired;
  if (chosen.length === 0) return null;
  return { sim: mean(chosen.map((l) => l.sim!)), real: mean(chosen.map((l) => l.real!)), layouts: chosen.length };
}

/** Pearson r and MMRV over policies, with a bootstrap that resamples layouts jointly for every policy. */
function correlate(policies: readonly PolicyReport[], seed: number, resamples: number): CorrelationReport {
  const pairs = policies.map((p) => {
    const m = pairedMeans(p)!;
    return { policy: p.label, sim: m.sim, real: m.real, layouts: m.layouts };
  });
  const r = pearson(pairs);
  const m = mmrv(pairs);
  const universe = [
    ...new Set(
      policies.flatMap((p) => p.layouts.filter((l) => l.sim !== null && l.real !== null).map((l) => l.layoutIndex)),
    ),
  ].sort((a, b) => a - b);
  const rng = createRng(seed ^ 0x5ca1ab1e);
  const rs: number[] = [];
  const ms: number[] = [];
  for (let b = 0; b < resamples; b++) {
    const draw = universe.map(() => universe[Math.floor(rng.next() * universe.length)]);
    const rp: PolicyPair[] = [];
    for (const p of policies) {
      const mm = pairedMeans(p, draw);
      if (mm) rp.push({ policy: p.label, sim: mm.sim, real: mm.real });
    }
    // A resample that drew none of some policy's layouts cannot say anything about it: skip it.
    if (rp.length !== policies.length) continue;
    ms.push(mmrv(rp));
    const pr = pearson(rp);
    if (pr.r !== null) rs.push(pr.r);
  }
  rs.sort((a, b) => a - b);
  ms.sort((a, b) => a - b);
  const violations: RankViolation[] = [];
  for (const a of pairs) {
    let worst = 0;
    const mine: RankViolation[] = [];
    for (const b of pairs) {
      if (a.sim > b.sim !== a.real > b.real) {
        const size = Math.abs(a.real - b.real);
        worst = Math.max(worst, size);
        mine.push({
          policy: a.policy,
          against: b.policy,
          sim: a.sim,
          againstSim: b.sim,
          real: a.real,
          againstReal: b.real,
          size,
          drivesMmrv: false,
        });
      }
    }
    let marked = false;
    for (const v of mine.sort((x, y) => y.size - x.size)) {
      const drives: boolean = !marked && v.size === worst;
      marked ||= drives;
      violations.push({ ...v, drivesMmrv: drives });
    }
  }
  return {
    policies: pairs.length,
    pairs,
    pearson: {
      r: r.r,
      ...(r.undefinedBecause ? { undefinedBecause: r.undefinedBecause } : {}),
      lower: rs.length ? quantileSorted(rs, 0.025) : null,
      upper: rs.length ? quantileSorted(rs, 0.975) : null,
    },
    mmrv: {
      value: m,
      lower: ms.length ? quantileSorted(ms, 0.025) : m,
      upper: ms.length ? quantileSorted(ms, 0.975) : m,
    },
    violations,
    bootstrap: { resamples, used: ms.length, seed, unit: 'layout' },
  };
}

/**
 * The sequential A/B verdict for neighbouring policies (by real mean) from their real rollouts
 * on shared layouts, one pair per layout, taken in the order the later rollout of the pair ran.
 */
function abComparisons(
  policies: readonly PolicyReport[],
  scored: readonly ReportRollout[],
  label: Map<string, string>,
): AbComparison[] {
  const ranked = [...policies]
    .filter((p) => p.real)
    .sort((x, y) => y.real!.tiers.at(-1)!.meanProgress - x.real!.tiers.at(-1)!.meanProgress);
  const out: AbComparison[] = [];
  for (let i = 0; i + 1 < ranked.length; i++) {
    const a = ranked[i];
    const b = ranked[i + 1];
    const realOf = (key: string) => {
      const m = new Map<number, ReportRollout>();
      for (const r of scored)
        if (r.kind === 'real' && r.policy === key && !m.has(r.layoutIndex)) m.set(r.layoutIndex, r);
      return m;
    };
    const ra = realOf(a.key);
    const rb = realOf(b.key);
    const shared = [...ra.keys()].filter((k) => rb.has(k)).map((k) => [ra.get(k)!, rb.get(k)!] as const);
    shared.sort((x, y) => Math.max(x[0].id, x[1].id) - Math.max(y[0].id, y[1].id));
    const verdict = sequentialVerdict(
      shared.map(([x, y]) => ({ a: x.progress!, b: y.progress! })),
      { names: { a: label.get(a.key) ?? a.key, b: label.get(b.key) ?? b.key } },
    );
    out.push({
      a: a.label,
      b: b.label,
      pairs: shared.length,
      verdict,
      rolloutIds: shared.map(([x, y]) => [x.id, y.id] as const),
    });
  }
  return out;
}

/** Policies in the order given (iterations), cumulative cost of evaluating each way. */
function costCurve(policies: readonly PolicyReport[]): CostCurvePoint[] {
  let realOnly = 0;
  let simEnabled = 0;
  const out: CostCurvePoint[] = [];
  for (const p of policies) {
    if (!p.real) continue;
    realOnly += p.cost.realOnlyEquivalentCost ?? p.cost.realCost;
    simEnabled += p.cost.realCost + p.cost.simCost;
    const all = p.real.tiers.at(-1)!;
    out.push({
      policy: p.label,
      realOnlyCost: realOnly,
      simEnabledCost: simEnabled,
      realOnlyProgress: all.meanProgress,
      simEnabledProgress: p.controlVariate?.estimate ?? all.meanProgress,
    });
  }
  return out;
}
