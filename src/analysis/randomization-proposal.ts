/**
 * Guided domain randomization: from a failure diagnosis, the ranges to randomize around its most
 * frequent pattern instead of uniformly — layouts that have the start condition that predicts it
 * (crowded, lying) on the tiers where it happens, the physics that pattern is sensitive to, and
 * camera pose and light varied around the failing scenes. Pure: it returns the spec's fields as
 * data; the caller writes it in the sim's randomization format (which checks every range again)
 * and stores it with its lineage.
 */
import type { FailurePattern } from '../tasks/failure-patterns.js';
import { CROWDED_RADIUS_M, type ConditionEffect, type FailureDiagnosis } from './failure-diagnosis.js';

type Range = readonly [number, number];

export interface RandomizationProposal {
  readonly physics: Readonly<Record<string, Range>>;
  readonly placement: { readonly sigmaM: number; readonly sigmaYawRad: number } | null;
  readonly visual: Readonly<Record<string, Range>>;
  readonly layouts: {
    readonly tiers: readonly number[];
    readonly minCrowdedObjects?: number;
    readonly crowdedRadiusM?: number;
    readonly minLyingObjects?: number;
  };
  readonly lineage: {
    readonly policy: string;
    readonly layoutSet: string;
    readonly pattern: FailurePattern;
    readonly tiers: readonly number[];
    readonly condition: string | null;
    readonly sentence: string;
    readonly rolloutIds: readonly number[];
  };
  /** Why each part is there, in words, for the operator. */
  readonly rationale: readonly string[];
}

export class NothingToProposeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NothingToProposeError';
  }
}

/** Camera pose and light nudged around the scenes where it fails: a learned policy sees them. */
const VISUAL_AROUND_FAILURES = {
  cameraPositionM: [-0.02, 0.02],
  cameraAngleRad: [-0.05, 0.05],
  lightIntensityScale: [0.6, 1.5],
  lightAzimuthRad: [-0.5, 0.5],
} as const;

/** The physics each pattern is sensitive to, and why. */
const PHYSICS_FOR: Partial<
  Record<
    FailurePattern,
    {
      readonly physics: Readonly<Record<string, Range>>;
      readonly placement?: { sigmaM: number; sigmaYawRad: number };
      readonly why: string;
    }
  >
> = {
  'never-grasped': {
    physics: { objectFrictionScale: [0.7, 1.3] },
    placement: { sigmaM: 0.01, sigmaYawRad: 0.2 },
    why: 'missed grasps: object friction and a centimetre of placement noise vary what the fingers meet',
  },
  'dropped-in-transit': {
    physics: { objectMassScale: [0.7, 1.6], fingerFriction: [0.6, 1.4] },
    why: 'drops in transit: heavier objects and less finger friction load the pinch',
  },
  'knocked-over': {
    physics: { objectFrictionScale: [0.6, 1.4], objectMassScale: [0.6, 1.4] },
    placement: { sigmaM: 0.015, sigmaYawRad: 0.3 },
    why: 'knocks: how easily a neighbour tips or slides, and where it stands',
  },
  'off-table': {
    physics: { objectFrictionScale: [0.5, 1.3], tableFriction: [0.3, 0.9] },
    placement: { sigmaM: 0.015, sigmaYawRad: 0.3 },
    why: 'objects off the table: how far a pushed object slides',
  },
  'left-the-target': {
    physics: { restitution: [0, 0.4], objectFrictionScale: [0.6, 1.4] },
    why: 'objects leaving the target after release: bounce and slide',
  },
  'out-of-time': {
    physics: { jointDampingScale: [0.8, 1.5], jointFrictionScale: [0.8, 1.5] },
    why: 'running out of time: slower arms stretch every move',
  },
  'held-at-end': {
    physics: { jointDampingScale: [0.8, 1.5] },
    why: 'episodes stopped with an object in hand: slower arms',
  },
  'left-undone': {
    physics: { objectFrictionScale: [0.7, 1.3] },
    placement: { sigmaM: 0.01, sigmaYawRad: 0.2 },
    why: 'objects left undone (no events to tell how): friction and placement noise',
  },
};

/** Conditions the layout sampler can put into layouts. */
const SAMPLED: readonly ConditionEffect['condition'][] = ['crowded', 'lying'];
const positive = (cs: readonly ConditionEffect[]): ConditionEffect[] =>
  cs.filter((c) => c.clear && c.riskDifference > 0);

/**
 * The conditions to aim at, strongest first: those that clearly predict the top pattern; and when
 * none of them is one the layout sampler controls, the sampled ones that clearly predict any
 * failure (a weakness often shows as several patterns — a missed grasp of a crowded bottle can
 * knock it over as well as leave it).
 */
function leadConditions(d: FailureDiagnosis): ConditionEffect[] {
  const forTop = positive(d.top!.conditions);
  if (forTop.some((c) => SAMPLED.includes(c.condition))) return forTop;
  return [...forTop, ...positive(d.conditions).filter((c) => SAMPLED.includes(c.condition))];
}

export function proposeRandomization(d: FailureDiagnosis): RandomizationProposal {
  const top = d.top;
  if (!top)
    throw new NothingToProposeError(
      `${d.policy} did not fail in any diagnosed rollout on this layout set: there is no failure pattern to randomize around.`,
    );
  const leads = leadConditions(d);
  const rationale: string[] = [top.sentence];
  const crowded = leads.find((c) => c.condition === 'crowded');
  const lying = leads.find((c) => c.condition === 'lying');
  // A layout focus only on tiers whose layouts had the condition (a tier-1 layout has one object: never crowded).
  const focused = [crowded, lying].filter((c): c is ConditionEffect => c !== undefined);
  const tiers = focused.length === 0 ? top.tiers : top.tiers.filter((t) => focused.every((c) => c.tiers.includes(t)));
  const layouts = {
    tiers: tiers.length > 0 ? tiers : top.tiers,
    ...(crowded ? { minCrowdedObjects: 2, crowdedRadiusM: CROWDED_RADIUS_M } : {}),
    ...(lying ? { minLyingObjects: 1 } : {}),
  };
  const tierWords = `tier${layouts.tiers.length === 1 ? '' : 's'} ${layouts.tiers.join(', ')}`;
  const what = (c: ConditionEffect): string => (c.outcome === 'any-failure' ? 'fail' : `fail this way`);
  if (crowded)
    rationale.push(
      `Layouts: ${tierWords} with at least 2 crowded objects each (${crowded.words}: ${Math.round(100 * crowded.withCondition.rate)}% ${what(crowded)} vs ${Math.round(100 * crowded.without.rate)}%).`,
    );
  if (lying)
    rationale.push(
      `Layouts: at least one lying object each (${Math.round(100 * lying.withCondition.rate)}% of lying objects ${what(lying)} vs ${Math.round(100 * lying.without.rate)}%).`,
    );
  if (!crowded && !lying)
    rationale.push(
      `Layouts: ${tierWords}, where it happens; no start condition the sampler controls predicts it clearly.`,
    );
  const far = leads.find((c) => c.condition === 'far-from-bin');
  if (far)
    rationale.push(
      `Objects far from the bin fail more (${Math.round(100 * far.withCondition.rate)}% vs ${Math.round(100 * far.without.rate)}%); the layout sampler does not place by bin distance, so it is not in the spec.`,
    );
  const arm = leads.find((c) => c.condition === 'left-arm');
  if (arm)
    rationale.push(
      `The left arm's objects fail more (${Math.round(100 * arm.withCondition.rate)}% vs ${Math.round(100 * arm.without.rate)}%): look at its calibration before randomizing further.`,
    );
  const p = PHYSICS_FOR[top.pattern] ?? { physics: {}, why: '' };
  if (p.why) rationale.push(`Physics: ${p.why}.`);
  rationale.push(
    'Cameras and light: nudged around the failing scenes (±2 cm, ±0.05 rad, light ×0.6–1.5), as a learned policy sees them.',
  );
  // The condition the spec aims at: the sampled one when there is one, else the strongest.
  const condition = (crowded ?? lying ?? leads[0])?.condition ?? null;
  return {
    physics: p.physics,
    placement: p.placement ?? null,
    visual: VISUAL_AROUND_FAILURES,
    layouts,
    lineage: {
      policy: d.policy,
      layoutSet: d.layoutSet,
      pattern: top.pattern,
      tiers: layouts.tiers,
      condition,
      sentence: top.sentence,
      rolloutIds: top.rolloutIds,
    },
    rationale,
  };
}
