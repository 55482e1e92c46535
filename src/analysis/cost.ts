/**
 * The evaluation cost ledger: operator hours and robot time per real rollout, CPU time per sim
 * rollout, priced from a config. The defaults are stated, round and meant to be replaced by a
 * lab's own numbers (`tandem report --cost FILE`).
 *
 * What is measured and what is assumed:
 * - Robot time is the rollout's stored duration (wall seconds the rig ran the episode).
 * - Operator time is what the session journal recorded for the rollout (placing, standing by while
 *   the rig runs it, scoring, resetting: src/session/operator-time.ts); for a rollout run outside
 *   a session, the episode itself plus `operatorOverheadS` (marked as an estimate).
 * - Sim CPU time is the sweep worker's wall seconds for the rollout: one worker thread occupies
 *   one core for that long (Node 20 has no per-thread CPU clock), which is also what a cloud
 *   machine bills. On a machine with more workers than cores it over-counts; said in the report.
 */

export interface CostConfig {
  readonly currency: string;
  /** An operator's loaded cost per hour. */
  readonly operatorPerHour: number;
  /** The rig's amortised cost per hour of use (hardware, upkeep, space). */
  readonly robotPerHour: number;
  /** One CPU core-hour (cloud price). */
  readonly cpuCorePerHour: number;
  /** Operator seconds per real rollout beyond the episode, when no session recorded them. */
  readonly operatorOverheadS: number;
}

/** Stated defaults: a $50/h operator, a $20/h rig, $0.05 per core-hour, 90 s of placing, resetting and scoring per real rollout. */
export const DEFAULT_COST_CONFIG: CostConfig = {
  currency: 'USD',
  operatorPerHour: 50,
  robotPerHour: 20,
  cpuCorePerHour: 0.05,
  operatorOverheadS: 90,
};

export interface PolicyCost {
  readonly realRollouts: number;
  readonly simRollouts: number;
  readonly robotHours: number;
  readonly operatorHours: number;
  /** How many real rollouts' operator time was recorded (the rest use the overhead estimate). */
  readonly operatorSecondsRecorded: number;
  /** Per real rollout: the operator seconds costed, and whether a session journal recorded them (else the estimate). */
  readonly operatorSeconds: readonly { readonly id: number; readonly seconds: number; readonly recorded: boolean }[];
  readonly cpuCoreHours: number;
  readonly realCost: number;
  readonly simCost: number;
  /** Real rollouts without a stored duration (costed at the mean of the others, or not at all). */
  readonly realWithoutDuration: readonly number[];
  readonly simWithoutDuration: readonly number[];
  /** What a real-only evaluation as precise as the sim-enabled one would cost (null without a control variate). */
  readonly realOnlyEquivalentCost: number | null;
  readonly realOnlyEquivalentRollouts: number | null;
  readonly perRealRollout: number | null;
  readonly perSimRollout: number | null;
  /** The rollouts costed. */
  readonly realRolloutIds: readonly number[];
  readonly simRolloutIds: readonly number[];
}

export function checkCostConfig(c: CostConfig): void {
  for (const k of ['operatorPerHour', 'robotPerHour', 'cpuCorePerHour', 'operatorOverheadS'] as const) {
    if (typeof c[k] !== 'number' || !Number.isFinite(c[k]) || c[k] < 0)
      throw new RangeError(`cost config ${k} must be a number ≥ 0, not ${String(c[k])}`);
  }
  if (typeof c.currency !== 'string' || c.currency.length === 0 || c.currency.length > 8)
    throw new RangeError(`cost config currency must be a short name like "USD", not ${JSON.stringify(c.currency)}`);
}

/**
 * One policy's ledger. `equivalentRealLayouts`: real rollouts a real-only interval would need to
 * match the control-variate interval; `pairedLayouts`: the real layouts it rests on.
 */
export function costLedger(
  real: readonly { id: number; durationS: number | null; operatorSeconds: number | null }[],
  sim: readonly { id: number; durationS: number | null }[],
  config: CostConfig,
  equivalentRealLayouts: number | null,
  pairedLayouts: number,
): PolicyCost {
  checkCostConfig(config);
  const known = (xs: readonly { durationS: number | null }[]) =>
    xs.filter((x) => x.durationS !== null && x.durationS >= 0).map((x) => x.durationS!);
  const realKnown = known(real);
  const simKnown = known(sim);
  const fill = (known: number[], total: number): number =>
    known.length === 0 ? 0 : (known.reduce((a, b) => a + b, 0) / known.length) * total;
  const robotS = fill(realKnown, real.length);
  let operatorS = 0;
  let recorded = 0;
  const meanRealS = realKnown.length ? realKnown.reduce((a, b) => a + b, 0) / realKnown.length : 0;
  const perRollout: { id: number; seconds: number; recorded: boolean }[] = [];
  for (const r of real) {
    const journalled = r.operatorSeconds !== null && r.operatorSeconds >= 0;
    const seconds = journalled ? r.operatorSeconds! : (r.durationS ?? meanRealS) + config.operatorOverheadS;
    operatorS += seconds;
    if (journalled) recorded += 1;
    perRollout.push({ id: r.id, seconds, recorded: journalled });
  }
  const cpuS = fill(simKnown, sim.length);
  const realCost = (robotS / 3600) * config.robotPerHour + (operatorS / 3600) * config.operatorPerHour;
  const simCost = (cpuS / 3600) * config.cpuCorePerHour;
  const perReal = real.length ? realCost / real.length : null;
  // A real-only evaluation with the same precision needs max(n_eff, n) rollouts: never fewer than were run.
  const eqRollouts = equivalentRealLayouts === null ? null : Math.max(equivalentRealLayouts, pairedLayouts);
  return {
    realRollouts: real.length,
    simRollouts: sim.length,
    robotHours: robotS / 3600,
    operatorHours: operatorS / 3600,
    operatorSecondsRecorded: recorded,
    operatorSeconds: perRollout,
    cpuCoreHours: cpuS / 3600,
    realCost,
    simCost,
    realWithoutDuration: real.filter((r) => r.durationS === null).map((r) => r.id),
    simWithoutDuration: sim.filter((r) => r.durationS === null).map((r) => r.id),
    realOnlyEquivalentCost: eqRollouts === null || perReal === null ? null : eqRollouts * perReal,
    realOnlyEquivalentRollouts: eqRollouts,
    perRealRollout: perReal,
    perSimRollout: sim.length ? simCost / sim.length : null,
    realRolloutIds: real.map((r) => r.id),
    simRolloutIds: sim.map((r) => r.id),
  };
}
