/**
 * A session plan: which layouts of a (hash-pinned) layout set, which policies, how many rollouts
 * each, in which order. The order is random but reproducible from the stored seed and interleaves
 * the policies — every block of consecutive rollouts runs each policy once on one layout, in a
 * shuffled order — so operator fatigue and rig drift over the hour favour none of them. Blind
 * plans give the policies letters; the letters' assignment is drawn from the seed too, so the
 * first spec typed is not always "A". The plan is fitted to the operator's time from measured
 * rollout and reset times (stated defaults before there are any). Pure: no I/O.
 */
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { createRng, type Rng } from '../layouts/random.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import {
  AnalysisPlanError,
  buildAnalysisPlan,
  checkAnalysisPlan,
  type AnalysisPlan,
  type AnalysisPlanOptions,
} from './analysis-plan.js';

export const SESSION_PLAN_FORMAT = 'tandem.session-plan/1';
export const DEFAULT_SESSION_MINUTES = 75;

/** Operator and rig seconds per rollout besides the episode itself. */
export interface RolloutCostS {
  /** Placing the layout's objects on the table from the projected footprints. */
  readonly placeS: number;
  /** Bringing the rig up and down around the episode (configure, activate, hold, damp). */
  readonly rigS: number;
  /** Entering the per-object score. */
  readonly scoreS: number;
  /** Clearing the table. */
  readonly resetS: number;
}

/** Before a station has measured anything: a careful operator's times on a small layout. */
export const DEFAULT_ROLLOUT_COST_S: RolloutCostS = { placeS: 45, rigS: 10, scoreS: 20, resetS: 30 };

export class SessionPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionPlanError';
  }
}

export interface PlannedPolicy {
  /** What the operator sees: "policy A" in a blind plan, else the spec itself. */
  readonly label: string;
  readonly spec: string;
}

export interface PlannedRollout {
  /** Position in the session, 0-based. */
  readonly slot: number;
  readonly layoutIndex: number;
  readonly policyLabel: string;
  /** Which repeat of this (layout, policy), 0-based. */
  readonly repeat: number;
  /** Consecutive slots with the same block run each policy once on one layout. */
  readonly block: number;
  /** The rollout's seed (policy and placement noise), drawn from the plan's seed. */
  readonly seed: number;
}

export interface SessionPlanBody {
  readonly format: typeof SESSION_PLAN_FORMAT;
  readonly task: string;
  readonly layoutSetSha256: string;
  readonly layoutSetVersion: number;
  /** Where the layout set was when the plan was made: where a run looks when the store lacks it. */
  readonly layoutSetFile?: string;
  readonly blind: boolean;
  readonly seed: number;
  readonly episodeSeconds: number;
  readonly policies: readonly PlannedPolicy[];
  readonly fit: {
    readonly minutes: number;
    readonly requestedPerLayout: number;
    readonly perLayout: number;
    readonly layoutsRequested: number;
    readonly layoutsPlanned: number;
    readonly cost: RolloutCostS;
    /** Where the per-rollout times came from. */
    readonly costSource: 'measured' | 'defaults';
    readonly plannedMinutes: number;
    /** Why the plan is smaller than asked, in words; absent when it is not. */
    readonly note?: string;
  };
  readonly rollouts: readonly PlannedRollout[];
  /** The pre-registered A/B analysis (two-policy plans), pinned by the plan's hash; absent: none. */
  readonly analysis?: AnalysisPlan;
}

export interface SessionPlan extends SessionPlanBody {
  /** Hex SHA-256 of the canonical JSON of everything else: the plan's id. */
  readonly sha256: string;
}

export interface PlanOptions {
  readonly set: LayoutSet;
  readonly specs: readonly string[];
  readonly perLayout: number;
  readonly blind: boolean;
  readonly seed: number;
  readonly minutes?: number;
  /** Layout indices to use (default every layout in the set). */
  readonly layouts?: readonly number[];
  /** Episode length; default the task's fixed one. */
  readonly episodeSeconds: number;
  readonly cost?: RolloutCostS;
  readonly costSource?: 'measured' | 'defaults';
  readonly layoutSetFile?: string;
  /** Pre-register the A/B analysis (two policies only). */
  readonly analysis?: AnalysisPlanOptions;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function planHash(body: SessionPlanBody): string {
  const { sha256: _ignored, ...rest } = body as SessionPlanBody & { sha256?: string };
  return bytesToHex(sha256(utf8ToBytes(canonicalize(rest)!)));
}

/** Fisher–Yates with the plan's generator: the same seed gives the same order on every machine. */
export function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Seconds one rollout costs, episode included. */
export function rolloutSeconds(cost: RolloutCostS, episodeSeconds: number): number {
  return cost.placeS + cost.rigS + episodeSeconds + cost.scoreS + cost.resetS;
}

/**
 * The order: for each repeat, every planned layout once (layouts shuffled), and for each layout
 * a block of every policy once (policies shuffled within the block).
 */
export function interleave(
  layouts: readonly number[],
  labels: readonly string[],
  perLayout: number,
  rng: Rng,
): PlannedRollout[] {
  const out: PlannedRollout[] = [];
  let block = 0;
  for (let repeat = 0; repeat < perLayout; repeat++) {
    for (const layoutIndex of shuffled(layouts, rng)) {
      for (const policyLabel of shuffled(labels, rng)) {
        out.push({ slot: out.length, layoutIndex, policyLabel, repeat, block, seed: rng.int(0, 2 ** 31 - 1) });
      }
      block += 1;
    }
  }
  return out;
}

export function buildSessionPlan(o: PlanOptions): SessionPlan {
  const specs = o.specs.map((s) => s.trim());
  if (specs.length < 1 || specs.some((s) => s.length === 0))
    throw new SessionPlanError('Give at least one policy spec (--policies SPEC,SPEC), none of them empty.');
  if (new Set(specs).size !== specs.length)
    throw new SessionPlanError(`A policy is listed twice in --policies (${specs.join(', ')}); list each once.`);
  if (specs.length > LETTERS.length)
    throw new SessionPlanError(`A session compares at most ${LETTERS.length} policies, not ${specs.length}.`);
  if (o.blind && specs.length < 2)
    throw new SessionPlanError('A blind session needs at least two policies to hide from the operator.');
  if (!Number.isSafeInteger(o.perLayout) || o.perLayout < 1)
    throw new SessionPlanError(`Rollouts per layout must be a whole number of at least 1, not ${o.perLayout}.`);
  if (!Number.isSafeInteger(o.seed) || o.seed < 0)
    throw new SessionPlanError(`The seed must be a whole number of 0 or more, not ${o.seed}.`);
  const minutes = o.minutes ?? DEFAULT_SESSION_MINUTES;
  if (!(minutes > 0)) throw new SessionPlanError(`The session's length must be more than 0 minutes, not ${minutes}.`);
  if (!(o.episodeSeconds > 0))
    throw new SessionPlanError(`The episode length must be more than 0 s, not ${o.episodeSeconds}.`);
  const layouts = o.layouts ?? o.set.layouts.map((l) => l.index);
  for (const i of layouts) {
    if (!Number.isSafeInteger(i) || i < 0 || i >= o.set.layouts.length)
      throw new SessionPlanError(
        `Layout ${i} is not in the layout set (it has layouts 0 to ${o.set.layouts.length - 1}).`,
      );
  }
  if (layouts.length === 0) throw new SessionPlanError('The plan has no layouts: the layout set is empty.');

  const rng = createRng(o.seed);
  // Letters are drawn before the order, so a plan's assignment depends on its seed alone.
  const order = o.blind ? shuffled(specs, rng) : specs;
  const policies: PlannedPolicy[] = order.map((spec, i) => ({ label: o.blind ? `policy ${LETTERS[i]}` : spec, spec }));

  // Fit: whole rounds (every layout × every policy) that fit the minutes; if not even one does,
  // the first layouts that fit one round (at least one layout, said so in the note).
  const cost = o.cost ?? DEFAULT_ROLLOUT_COST_S;
  const perRolloutS = rolloutSeconds(cost, o.episodeSeconds);
  const budgetS = minutes * 60;
  const roundS = perRolloutS * specs.length * layouts.length;
  let perLayout = Math.min(o.perLayout, Math.floor(budgetS / roundS));
  let used = layouts;
  let note: string | undefined;
  if (perLayout < 1) {
    perLayout = 1;
    const fits = Math.max(1, Math.floor(budgetS / (perRolloutS * specs.length)));
    used = layouts.slice(0, fits);
    note = `One round of all ${layouts.length} layouts takes ${(roundS / 60).toFixed(0)} min, more than ${minutes} min: the plan uses the first ${used.length} layout${used.length === 1 ? '' : 's'}, once each.`;
  } else if (perLayout < o.perLayout) {
    note = `${o.perLayout} rollouts per layout take ${((roundS * o.perLayout) / 60).toFixed(0)} min, more than ${minutes} min: the plan runs ${perLayout} per layout.`;
  }
  const rollouts = interleave(
    used,
    policies.map((p) => p.label),
    perLayout,
    rng,
  );
  const body: SessionPlanBody = {
    format: SESSION_PLAN_FORMAT,
    task: o.set.task,
    layoutSetSha256: o.set.sha256,
    layoutSetVersion: o.set.version,
    ...(o.layoutSetFile ? { layoutSetFile: o.layoutSetFile } : {}),
    blind: o.blind,
    seed: o.seed,
    episodeSeconds: o.episodeSeconds,
    policies,
    fit: {
      minutes,
      requestedPerLayout: o.perLayout,
      perLayout,
      layoutsRequested: layouts.length,
      layoutsPlanned: used.length,
      cost,
      costSource: o.costSource ?? 'defaults',
      plannedMinutes: Number(((rollouts.length * perRolloutS) / 60).toFixed(1)),
      ...(note ? { note } : {}),
    },
    rollouts,
    ...(o.analysis
      ? {
          analysis: analysisError(() =>
            buildAnalysisPlan(
              o.analysis!,
              policies.map((p) => p.label),
              plannedPairs(rollouts),
            ),
          ),
        }
      : {}),
  };
  return { ...body, sha256: planHash(body) };
}

function analysisError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AnalysisPlanError) throw new SessionPlanError(e.message);
    throw e;
  }
}

/** Pairs a two-policy plan runs: one per block (each block runs every policy once on one layout). */
export function plannedPairs(rollouts: readonly PlannedRollout[]): number {
  return new Set(rollouts.map((r) => r.block)).size;
}

/**
 * The plan's rollouts without its analysis: two plans with the same identity run the same
 * rollouts, so a session of one is a session of the other for pre-registration's sake.
 */
export function rolloutPlanIdentity(plan: SessionPlanBody): string {
  const { analysis: _analysis, ...rest } = plan;
  return planHash(rest);
}

/** The plan with its analysis plan set (or replaced), hashed again. */
export function withAnalysisPlan(plan: SessionPlan, o: AnalysisPlanOptions): SessionPlan {
  const { sha256: _old, analysis: _analysis, ...rest } = plan;
  const body: SessionPlanBody = {
    ...rest,
    analysis: analysisError(() =>
      buildAnalysisPlan(
        o,
        plan.policies.map((p) => p.label),
        plannedPairs(plan.rollouts),
      ),
    ),
  };
  return { ...body, sha256: planHash(body) };
}

export function serializeSessionPlan(plan: SessionPlan): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}

/** Parses a plan file and checks its own hash; a hand-edited plan is refused, not trusted. */
export function parseSessionPlan(text: string, source: string): SessionPlan {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new SessionPlanError(
      `${source} is not valid JSON (${(e as Error).message}); the plan file may be truncated or damaged.`,
    );
  }
  const p = v as Partial<SessionPlan> | null;
  if (
    p === null ||
    typeof p !== 'object' ||
    p.format !== SESSION_PLAN_FORMAT ||
    !Array.isArray(p.rollouts) ||
    !Array.isArray(p.policies) ||
    typeof p.sha256 !== 'string'
  ) {
    throw new SessionPlanError(
      `${source} is not a session plan (format ${SESSION_PLAN_FORMAT}); write one with 'tandem session plan'.`,
    );
  }
  const actual = planHash(p as SessionPlanBody);
  if (actual !== p.sha256)
    throw new SessionPlanError(
      `${source} was changed after it was written (its hash is ${actual.slice(0, 12)}, it says ${p.sha256.slice(0, 12)}); write a new plan with 'tandem session plan' rather than editing one.`,
    );
  if (p.analysis !== undefined) analysisError(() => checkAnalysisPlan(p.analysis, source));
  return p as SessionPlan;
}

/** The refusal when the layouts given are not the ones the plan was made for. */
export function checkPlanLayoutSet(plan: SessionPlan, set: LayoutSet, source: string): void {
  if (set.sha256 !== plan.layoutSetSha256) {
    throw new SessionPlanError(
      `The layout set ${source} (${set.sha256.slice(0, 12)}, version ${set.version}) is not the one this plan was made for (${plan.layoutSetSha256.slice(0, 12)}, version ${plan.layoutSetVersion}); give the plan's own layout set, or plan again with this one.`,
    );
  }
}

/** The spec behind a label (the engine's only way from what the operator sees to what runs). */
export function specOf(plan: SessionPlan, label: string): string {
  const p = plan.policies.find((x) => x.label === label);
  if (!p) throw new SessionPlanError(`The plan has no ${label}.`);
  return p.spec;
}
