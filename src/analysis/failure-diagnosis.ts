/**
 * Failure diagnosis of one policy on one layout set: from each stored rollout's task events (sim
 * and real alike), which failure patterns happen on each tier and how often — the share of
 * rollouts with at least one object failing that way, with a 95% Wilson interval — whether the
 * sim reproduces each pattern's real frequency, and which conditions of an object at the start
 * (crowded by neighbours, lying, far from the bin, the arm that took it) predict that it fails,
 * with effect sizes. Pure: the `tandem diagnose` command reads the store and hands the rows in.
 *
 * Why a rollout rate and not an object rate for the ranking: objects of one rollout share its
 * world, its arms and its timing, so they are not independent trials; rollouts are. The
 * conditions are per object (a condition is a property of an object), and say so.
 */
import {
  classifyObjectFailures,
  FAILURE_PATTERN_WORDS,
  FAILURE_PATTERNS,
  type FailurePattern,
  type ObjectResult,
} from '../tasks/failure-patterns.js';
import type { TaskEvent } from '../tasks/task-events.js';
import type { Layout, LayoutObject, ObjectEndState, TaskDefinition } from '../tasks/types.js';
import { wilsonInterval } from './intervals.js';

/** An object with another object's centre this close at the start counts as crowded. */
export const CROWDED_RADIUS_M = 0.15;
/** Example rollouts kept per pattern and side. */
export const EXAMPLES_PER_PATTERN = 5;

export interface DiagnosisRollout {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  readonly layoutIndex: number;
  readonly tier: number;
  /** Why it ended (an EPISODE_OUTCOMES code): 'completed' means it ran its full length. */
  readonly outcome: string | null;
  readonly taskEvents: readonly TaskEvent[];
  /** Real: the operator's per-object end states, when scored that way. */
  readonly endStates?: readonly ObjectEndState[] | null;
  /** Sim: the stored per-kind end-state outcome counts, parsed. */
  readonly outcomeCounts?: readonly { readonly outcome: string; readonly kind: string; readonly n: number }[] | null;
  /** Where its replay is, when the caller has one (the station's replay view, an episode file). */
  readonly replay?: string | null;
}

export interface DiagnosisInput {
  readonly task: TaskDefinition;
  readonly layoutSet: { readonly sha256: string; readonly layouts: readonly Layout[] };
  readonly policy: string;
  readonly rollouts: readonly DiagnosisRollout[];
  readonly confidence?: number;
}

export interface RateCell {
  /** Rollouts with at least one object failing this way. */
  readonly rollouts: number;
  /** Classified rollouts on this side (and tier). */
  readonly of: number;
  readonly rate: number;
  readonly lower: number;
  readonly upper: number;
  /** Objects that failed this way, of the target objects. */
  readonly objects: number;
  readonly ofObjects: number;
}

/**
 * How the sim's frequency of a pattern compares with the real one: reproduced (both seen, the
 * intervals overlap), sim-higher / sim-lower (both seen or one only, the intervals apart),
 * real-only / sim-only (seen on one side only, intervals overlapping: too few rollouts to tell),
 * or one side has no rollouts at all.
 */
export type SimRealAgreement =
  | 'reproduced'
  | 'sim-higher'
  | 'sim-lower'
  | 'sim-only'
  | 'real-only'
  | 'no-real-rollouts'
  | 'no-sim-rollouts';

export interface PatternExample {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  readonly layoutIndex: number;
  readonly objects: readonly string[];
  readonly replay: string | null;
}

export interface PatternRow {
  readonly pattern: FailurePattern;
  readonly words: string;
  /** Both sides pooled: what the ranking is by. */
  readonly pooled: RateCell;
  readonly sim: RateCell | null;
  readonly real: RateCell | null;
  readonly agreement: SimRealAgreement;
  readonly examples: readonly PatternExample[];
}

export interface TierDiagnosis {
  readonly tier: number;
  readonly rollouts: { readonly sim: number; readonly real: number };
  /** Most frequent first; patterns never seen are left out. */
  readonly patterns: readonly PatternRow[];
}

export type ConditionName = 'crowded' | 'lying' | 'far-from-bin' | 'left-arm';

export interface ConditionEffect {
  readonly condition: ConditionName;
  /** The condition in words, with its threshold. */
  readonly words: string;
  /** Which failures: any failure, or one pattern. */
  readonly outcome: 'any-failure' | FailurePattern;
  /** Objects with the condition: failed / all. */
  readonly withCondition: { readonly failed: number; readonly of: number; readonly rate: number };
  readonly without: { readonly failed: number; readonly of: number; readonly rate: number };
  /** Failure rate with minus without, and its Newcombe (Wilson-hybrid) interval. */
  readonly riskDifference: number;
  readonly lower: number;
  readonly upper: number;
  /** Cohen's h = 2 asin √p₁ − 2 asin √p₂ (0.2 small, 0.5 medium, 0.8 large). */
  readonly cohensH: number;
  /** The interval excludes 0. */
  readonly clear: boolean;
  /** The tiers with objects that have the condition. */
  readonly tiers: readonly number[];
}

export interface FailureDiagnosis {
  readonly task: string;
  readonly layoutSet: string;
  readonly policy: string;
  readonly confidence: number;
  readonly rollouts: {
    readonly sim: number;
    readonly real: number;
    readonly notClassified: readonly { readonly id: number; readonly why: string }[];
  };
  /** All tiers pooled, most frequent first. */
  readonly overall: readonly PatternRow[];
  readonly tiers: readonly TierDiagnosis[];
  /** Conditions that predict any failure, strongest clear effect first. */
  readonly conditions: readonly ConditionEffect[];
  /** The most frequent pattern, the tiers it is most frequent on, and the conditions that predict it. */
  readonly top: {
    readonly pattern: FailurePattern;
    readonly words: string;
    readonly tiers: readonly number[];
    readonly conditions: readonly ConditionEffect[];
    /** The rollouts behind it (every rollout with it, both sides). */
    readonly rolloutIds: readonly number[];
    readonly sentence: string;
  } | null;
  readonly notes: readonly string[];
}

export class DiagnosisInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DiagnosisInputError';
  }
}

/** One target object's start conditions and result in one rollout. */
interface ObjectCase {
  readonly rollout: DiagnosisRollout;
  readonly id: string;
  readonly result: ObjectResult;
  readonly crowded: boolean;
  readonly lying: boolean;
  readonly binDistanceM: number | undefined;
  /** The arm that first took it (undefined: never grasped). */
  readonly arm: 'left' | 'right' | undefined;
}

const neighbours = (layout: Layout, o: LayoutObject): number =>
  layout.objects.filter((q) => q !== o && Math.hypot(q.pose.x - o.pose.x, q.pose.y - o.pose.y) < CROWDED_RADIUS_M)
    .length;

/** The distance from the object to the task's target fixture (the bin), when the task has one loose on the table. */
function binDistance(task: TaskDefinition, layout: Layout, o: LayoutObject): number | undefined {
  if (task.id !== 'bottles-in-the-bin') return undefined;
  const bin = layout.fixtures[0];
  return bin ? Math.hypot(bin.pose.x - o.pose.x, bin.pose.y - o.pose.y) : undefined;
}

function rateCell(rollouts: number, of: number, objects: number, ofObjects: number, confidence: number): RateCell {
  const w = of > 0 ? wilsonInterval(rollouts, of, { confidence }) : { lower: 0, upper: 1 };
  return { rollouts, of, rate: of > 0 ? rollouts / of : 0, lower: w.lower, upper: w.upper, objects, ofObjects };
}

function agreement(sim: RateCell | null, real: RateCell | null): SimRealAgreement {
  if (!real || real.of === 0) return 'no-real-rollouts';
  if (!sim || sim.of === 0) return 'no-sim-rollouts';
  const apart = sim.lower > real.upper || real.lower > sim.upper;
  if (apart) return sim.rate > real.rate ? 'sim-higher' : 'sim-lower';
  if (sim.rollouts > 0 && real.rollouts > 0) return 'reproduced';
  return sim.rollouts > 0 ? 'sim-only' : 'real-only';
}

function patternRows(
  cases: readonly ObjectCase[],
  classified: readonly DiagnosisRollout[],
  confidence: number,
): PatternRow[] {
  const rows: PatternRow[] = [];
  const sides = ['sim', 'real'] as const;
  for (const pattern of FAILURE_PATTERNS) {
    const hit = cases.filter((c) => c.result === pattern);
    if (hit.length === 0) continue;
    const cell = (keep: (r: DiagnosisRollout) => boolean): RateCell => {
      const all = classified.filter(keep);
      const ids = new Set(hit.filter((c) => keep(c.rollout)).map((c) => c.rollout.id));
      const targets = cases.filter((c) => keep(c.rollout) && c.result !== 'not-a-target').length;
      return rateCell(ids.size, all.length, hit.filter((c) => keep(c.rollout)).length, targets, confidence);
    };
    const [sim, real] = sides.map((side) =>
      classified.some((r) => r.kind === side) ? cell((r) => r.kind === side) : null,
    );
    const byRollout = new Map<number, ObjectCase[]>();
    for (const c of hit) byRollout.set(c.rollout.id, [...(byRollout.get(c.rollout.id) ?? []), c]);
    // Examples from each side, the rollouts with most objects failing this way first.
    const examples = sides.flatMap((side) =>
      [...byRollout.values()]
        .filter((cs) => cs[0].rollout.kind === side)
        .sort((a, b) => b.length - a.length || a[0].rollout.id - b[0].rollout.id)
        .slice(0, EXAMPLES_PER_PATTERN)
        .map((cs) => ({
          id: cs[0].rollout.id,
          kind: side,
          layoutIndex: cs[0].rollout.layoutIndex,
          objects: cs.map((c) => c.id),
          replay: cs[0].rollout.replay ?? null,
        })),
    );
    rows.push({
      pattern,
      words: FAILURE_PATTERN_WORDS[pattern],
      pooled: cell(() => true),
      sim,
      real,
      agreement: agreement(sim, real),
      examples,
    });
  }
  return rows.sort(
    (a, b) =>
      b.pooled.rate - a.pooled.rate ||
      b.pooled.objects - a.pooled.objects ||
      FAILURE_PATTERNS.indexOf(a.pattern) - FAILURE_PATTERNS.indexOf(b.pattern),
  );
}

/** Newcombe's hybrid-score interval for p₁ − p₂ (method 10), from the two Wilson intervals. */
function newcombe(
  k1: number,
  n1: number,
  k2: number,
  n2: number,
  confidence: number,
): { lower: number; upper: number } {
  const a = wilsonInterval(k1, n1, { confidence });
  const b = wilsonInterval(k2, n2, { confidence });
  const p1 = k1 / n1;
  const p2 = k2 / n2;
  const d = p1 - p2;
  return {
    lower: d - Math.sqrt((p1 - a.lower) ** 2 + (b.upper - p2) ** 2),
    upper: d + Math.sqrt((a.upper - p1) ** 2 + (p2 - b.lower) ** 2),
  };
}

function conditionEffects(
  cases: readonly ObjectCase[],
  outcome: 'any-failure' | FailurePattern,
  confidence: number,
): ConditionEffect[] {
  const targets = cases.filter((c) => c.result !== 'not-a-target');
  const failed = (c: ObjectCase): boolean => (outcome === 'any-failure' ? c.result !== 'done' : c.result === outcome);
  const distances = targets
    .map((c) => c.binDistanceM)
    .filter((d): d is number => d !== undefined)
    .sort((x, y) => x - y);
  const medianM = distances.length > 0 ? distances[Math.floor(distances.length / 2)] : undefined;
  const splits: { condition: ConditionName; words: string; on: (c: ObjectCase) => boolean | undefined }[] = [
    {
      condition: 'crowded',
      words: `crowded (another object within ${(CROWDED_RADIUS_M * 100).toFixed(0)} cm at the start)`,
      on: (c) => c.crowded,
    },
    { condition: 'lying', words: 'lying at the start (not upright)', on: (c) => c.lying },
    ...(medianM !== undefined
      ? [
          {
            condition: 'far-from-bin' as const,
            words: `far from the bin (≥ ${(medianM * 100).toFixed(0)} cm, the median)`,
            on: (c: ObjectCase) => (c.binDistanceM === undefined ? undefined : c.binDistanceM >= medianM),
          },
        ]
      : []),
    // Only objects some hand took have an arm; which arm says nothing about one never grasped.
    {
      condition: 'left-arm',
      words: 'taken by the left arm (vs the right; grasped objects only)',
      on: (c) => (c.arm === undefined ? undefined : c.arm === 'left'),
    },
  ];
  const out: ConditionEffect[] = [];
  for (const s of splits) {
    const yes = targets.filter((c) => s.on(c) === true);
    const no = targets.filter((c) => s.on(c) === false);
    if (yes.length === 0 || no.length === 0) continue;
    const k1 = yes.filter(failed).length;
    const k2 = no.filter(failed).length;
    const p1 = k1 / yes.length;
    const p2 = k2 / no.length;
    const ci = newcombe(k1, yes.length, k2, no.length, confidence);
    out.push({
      condition: s.condition,
      words: s.words,
      outcome,
      withCondition: { failed: k1, of: yes.length, rate: p1 },
      without: { failed: k2, of: no.length, rate: p2 },
      riskDifference: p1 - p2,
      lower: ci.lower,
      upper: ci.upper,
      cohensH: 2 * Math.asin(Math.sqrt(p1)) - 2 * Math.asin(Math.sqrt(p2)),
      clear: ci.lower > 0 || ci.upper < 0,
      tiers: [...new Set(yes.map((c) => c.rollout.tier))].sort((a, b) => a - b),
    });
  }
  return out.sort((a, b) => Number(b.clear) - Number(a.clear) || Math.abs(b.cohensH) - Math.abs(a.cohensH));
}

export function diagnoseFailures(input: DiagnosisInput): FailureDiagnosis {
  const confidence = input.confidence ?? 0.95;
  if (!(confidence > 0 && confidence < 1))
    throw new DiagnosisInputError(`The confidence level must lie strictly between 0 and 1, not ${confidence}.`);
  const { task, layoutSet } = input;
  const cases: ObjectCase[] = [];
  const classified: DiagnosisRollout[] = [];
  const notClassified: { id: number; why: string }[] = [];
  for (const r of input.rollouts) {
    const layout = layoutSet.layouts[r.layoutIndex];
    if (!layout)
      throw new DiagnosisInputError(
        `Rollout ${r.id} names layout ${r.layoutIndex}, which layout set ${layoutSet.sha256.slice(0, 12)} does not have (0 to ${layoutSet.layouts.length - 1}).`,
      );
    if (r.taskEvents.length === 0) {
      notClassified.push({ id: r.id, why: 'no task events were stored with it' });
      continue;
    }
    const c = classifyObjectFailures(task, layout, {
      events: r.taskEvents,
      endStates: r.endStates,
      outcomeCounts: r.outcomeCounts,
      ranFullLength: r.outcome === 'completed',
    });
    if (!c.ok) {
      notClassified.push({ id: r.id, why: c.why });
      continue;
    }
    classified.push(r);
    for (const row of c.objects) {
      const o = layout.objects.find((x) => x.id === row.id)!;
      const firstGrasp = r.taskEvents.find((e) => e.kind === 'grasped' && e.objectId === o.id);
      cases.push({
        rollout: r,
        id: o.id,
        result: row.result,
        crowded: neighbours(layout, o) > 0,
        lying: o.posture !== 'upright',
        binDistanceM: binDistance(task, layout, o),
        arm: firstGrasp?.arm,
      });
    }
  }
  if (classified.length === 0) {
    const why =
      notClassified.length === 0
        ? 'there are no rollouts of it on this layout set'
        : `none of its ${notClassified.length} rollouts could be classified (${notClassified[0].why})`;
    throw new DiagnosisInputError(
      `Cannot diagnose ${input.policy} on layout set ${layoutSet.sha256.slice(0, 12)}: ${why}.`,
    );
  }
  const overall = patternRows(cases, classified, confidence);
  const tierNumbers = [...new Set(classified.map((r) => r.tier))].sort((a, b) => a - b);
  const tiers = tierNumbers.map((tier) => {
    const mine = classified.filter((r) => r.tier === tier);
    return {
      tier,
      rollouts: {
        sim: mine.filter((r) => r.kind === 'sim').length,
        real: mine.filter((r) => r.kind === 'real').length,
      },
      patterns: patternRows(
        cases.filter((c) => c.rollout.tier === tier),
        mine,
        confidence,
      ),
    };
  });
  const conditions = conditionEffects(cases, 'any-failure', confidence);
  const notes: string[] = [];
  if (notClassified.length > 0)
    notes.push(
      `${notClassified.length} rollout${notClassified.length === 1 ? ' is' : 's are'} not in the diagnosis: ${[...new Set(notClassified.map((n) => n.why))].slice(0, 3).join('; ')} (ids ${notClassified
        .map((n) => n.id)
        .slice(0, 12)
        .join(', ')}${notClassified.length > 12 ? ', …' : ''}).`,
    );
  notes.push(
    'Condition effects are per object; objects of one rollout share its world, so their intervals are somewhat too narrow.',
  );
  let top: FailureDiagnosis['top'] = null;
  const first = overall[0];
  if (first) {
    const rates = tiers.map((t) => ({
      tier: t.tier,
      rate: t.patterns.find((p) => p.pattern === first.pattern)?.pooled.rate ?? 0,
    }));
    const best = Math.max(...rates.map((r) => r.rate));
    // The tiers where it is at least half as frequent as on its worst tier.
    const topTiers = rates.filter((r) => r.rate > 0 && r.rate >= best / 2).map((r) => r.tier);
    const topConditions = conditionEffects(cases, first.pattern, confidence);
    const rolloutIds = [...new Set(cases.filter((c) => c.result === first.pattern).map((c) => c.rollout.id))].sort(
      (a, b) => a - b,
    );
    const lead = topConditions.find((c) => c.clear && c.riskDifference > 0);
    const anyLead = conditions.find((c) => c.clear && c.riskDifference > 0);
    const short = (c: ConditionEffect): string => c.words.replace(/ \(.*\)$/, '');
    const pct = (x: number): string => `${Math.round(100 * x)}%`;
    const sentence =
      `Most frequent: ${first.words}, in ${pct(first.pooled.rate)} of rollouts [${pct(first.pooled.lower)}, ${pct(first.pooled.upper)}], worst on tier${topTiers.length === 1 ? '' : 's'} ${topTiers.join(', ')}` +
      (lead
        ? `; objects ${short(lead)} fail this way ${pct(lead.withCondition.rate)} vs ${pct(lead.without.rate)} otherwise (h = ${lead.cohensH.toFixed(2)})`
        : '; no start condition clearly predicts it') +
      (anyLead && anyLead.condition !== lead?.condition
        ? `; of all failures, objects ${short(anyLead)} fail ${pct(anyLead.withCondition.rate)} vs ${pct(anyLead.without.rate)} (h = ${anyLead.cohensH.toFixed(2)}).`
        : '.');
    top = {
      pattern: first.pattern,
      words: first.words,
      tiers: topTiers,
      conditions: topConditions,
      rolloutIds,
      sentence,
    };
  }
  return {
    task: task.id,
    layoutSet: layoutSet.sha256,
    policy: input.policy,
    confidence,
    rollouts: {
      sim: classified.filter((r) => r.kind === 'sim').length,
      real: classified.filter((r) => r.kind === 'real').length,
      notClassified,
    },
    overall,
    tiers,
    conditions,
    top,
    notes,
  };
}
