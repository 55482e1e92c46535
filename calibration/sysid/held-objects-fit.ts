/** The fit's second stage: the held objects' parameters, on the holding samples of the fit episodes. */
import type { RigModel } from '../../src/rig/contract.js';
import type { SimCalibration } from '../../src/sim/calibration.js';
import type { EpisodeTrajectory } from './episode-trajectory.js';
import { levenbergMarquardt, type LmIteration } from './levenberg-marquardt.js';
import { calibrationAt, objectParameters, toUnit, type FitParameter } from './parameters.js';
import { HOLDING_JOINT_INDICES, holdingEndS } from './replay.js';
import type { ReplayPool } from './replay-pool.js';
import { identify, type ParameterReport } from './identify.js';
import { concatResiduals, mrad, rmsOf } from './residuals.js';

/** A held-out or fit episode's holding samples: how far past the last one its replay runs. */
const HOLDING_TAIL_S = 0.1;
/** The held-object parameters are screened a factor this far either side of their start value… */
const PROBE_FACTOR = 1.2;
/** …and fitted only when that moves the held arm by at least this (RMS over the holding samples)… */
const MIN_HOLDING_EFFECT_RAD = 1e-4;
/**
 * …along a trend: the two steps' mean effect (the bend) under this share of their half-difference
 * (the slope). On sim takes of known physics the object mass's bend was 0.05–0.13 of its slope; the
 * squeeze's and the frictions' 0.2–1.2 (they change how the object settles in the fingers).
 */
const MAX_HOLDING_BEND = 0.25;

/**
 * The second stage: objectMassScale, the squeeze and the frictions fitted on the holding samples of
 * the fit episodes that hold objects with their layout replayed, the joints held as the first stage
 * fitted them; judged by the same rules (what these episodes do not pin down keeps its start value
 * and is named). An episode whose replay loses the object (its simulated gripper closes where the
 * measured one held) says nothing about the object: its holding samples are left out, with why.
 */
export async function fitHeldObjects(c: {
  readonly pool: ReplayPool;
  readonly model: RigModel;
  readonly from: SimCalibration;
  readonly joints: SimCalibration;
  readonly fitEps: readonly EpisodeTrajectory[];
  readonly say: (line: string) => void;
  readonly maxIterations: number;
  readonly trials: number;
}): Promise<{
  calibration: SimCalibration;
  reports: ParameterReport[];
  leftOut: { file: string; reason: string }[];
  notFitted: string[];
}> {
  const params = objectParameters(c.from);
  const names = params.map((p) => p.name).join(', ');
  const holding = c.fitEps.flatMap((e, i) => {
    const end = e.table ? holdingEndS(e, c.model) : undefined;
    return end === undefined ? [] : [{ index: i, file: e.file, seconds: end + HOLDING_TAIL_S }];
  });
  const keep = (why: string) => ({
    calibration: c.joints,
    reports: [],
    leftOut: [],
    notFitted: [`${names}: ${why}; they keep the start record’s values.`],
  });
  if (holding.length === 0)
    return keep(
      'no fit episode holds an object with its layout on the table (record takes with `--layouts FILE --layout I` and give the set to `sysid fit --layouts FILE`), so no measured effort carries one',
    );
  // Which replays keep hold of the object, on the joints as fitted and the start record's objects.
  const [probe] = await c.pool.replayAll(
    [c.joints],
    holding.map((h) => h.index),
    holding.map((h) => h.seconds),
  );
  const leftOut = holding.flatMap((h, i) =>
    probe[i].lostObject ? [{ file: h.file, reason: probe[i].lostObject! }] : [],
  );
  const used = holding.filter(
    (_, i) => !probe[i].lostObject && probe[i].problem === undefined && (probe[i].holdingResiduals?.length ?? 0) > 0,
  );
  for (const l of leftOut) c.say(`Holding left out: ${l.reason}`);
  if (used.length === 0)
    return { ...keep('every fit episode that holds an object lost it in the replay (above)'), leftOut };
  let lengths: number[] = [];
  const replayHolding = async (
    ps: readonly FitParameter[],
    base: SimCalibration,
    points: readonly Float64Array[],
  ): Promise<(Float64Array | undefined)[]> => {
    const replies = await c.pool.replayAll(
      points.map((u) => calibrationAt(base, ps, u)),
      used.map((h) => h.index),
      used.map((h) => h.seconds),
    );
    const ok = replies.find((rs) => rs.every((r) => r.problem === undefined));
    if (ok) lengths = ok.map((r) => r.holdingResiduals?.length ?? 0);
    return replies.map((rs) => concatResiduals(rs, 'holdingResiduals'));
  };
  // Screen: each parameter a step either way (±PROBE_FACTOR) from the start record's value, in one
  // batch. Only a parameter whose effect on the holding samples is a trend (the two steps move them
  // in opposite directions, nearly alike) can be fitted by following a slope; the grasp's squeeze
  // and frictions mostly change how the object settles in the fingers, which moves the arm by
  // different amounts either way.
  const u0 = Float64Array.from(params, (p) => toUnit(p, p.get(c.from)));
  const steps = params.map((p, k) => toUnit(p, p.get(c.from) * PROBE_FACTOR) - u0[k]);
  const probes = [
    u0,
    ...params.flatMap((_, k) =>
      [1, -1].map((sign) => Float64Array.from(u0, (x, i) => (i === k ? x + sign * steps[k] : x))),
    ),
  ];
  const screened = await replayHolding(params, c.joints, probes);
  const start = screened[0];
  if (!start) return { ...keep('the sim cannot replay the holding episodes on the first stage’s joints'), leftOut };
  const screen = params.map((p, k) => {
    const plus = screened[1 + 2 * k];
    const minus = screened[2 + 2 * k];
    if (!plus || !minus)
      return {
        p,
        fit: false,
        note: `not identified by these episodes: the replay fails ${Math.round((PROBE_FACTOR - 1) * 100)}% from its start value`,
      };
    const slope = rmsOf(plus.map((x, i) => (x - minus[i]) / 2));
    const bend = rmsOf(plus.map((x, i) => (x + minus[i]) / 2 - start[i]));
    const pct = `±${Math.round((PROBE_FACTOR - 1) * 100)}%`;
    if (slope < MIN_HOLDING_EFFECT_RAD)
      return {
        p,
        fit: false,
        note: `not identified by these episodes: ${pct} moves the held arm by under ${mrad(MIN_HOLDING_EFFECT_RAD)} RMS`,
      };
    if (bend > MAX_HOLDING_BEND * slope) {
      return {
        p,
        fit: false,
        note: `not identified by these episodes: ${pct} moves the held arm by ${mrad(rmsOf(plus.map((x, i) => x - start[i])))} and ${mrad(rmsOf(minus.map((x, i) => x - start[i])))} RMS, not a trend a fit can follow (it changes how the object settles in the grasp)`,
      };
    }
    return { p, fit: true, note: undefined };
  });
  c.say(
    `Held objects, screened on the holding samples of ${used.length} episode${used.length === 1 ? '' : 's'} (RMS ${mrad(rmsOf(start))} on the start record’s objects): ${screen.map((x) => `${x.p.name} ${x.fit ? 'fitted' : 'not fitted'}`).join(', ')}.`,
  );
  const fitParams = screen.filter((x) => x.fit).map((x) => x.p);
  const unfit = screen
    .filter((x) => !x.fit)
    .map((x) => ({
      name: x.p.name,
      unit: x.p.unit,
      start: x.p.get(c.from),
      fitted: x.p.get(c.from),
      sigma: Infinity,
      identified: false,
      minor: false,
      note: x.note,
    }));
  if (fitParams.length === 0) return { calibration: c.joints, reports: unfit, leftOut, notFitted: [] };
  const fu0 = Float64Array.from(fitParams, (p) => toUnit(p, p.get(c.from)));
  const residualsAt = (points: readonly Float64Array[]): Promise<(Float64Array | undefined)[]> =>
    replayHolding(fitParams, c.joints, points);
  const lm = await levenbergMarquardt(
    { dimension: fitParams.length, evaluate: residualsAt, groups: fitParams.map((_, k) => [k]), owns: () => true },
    fu0,
    {
      maxIterations: c.maxIterations,
      trials: c.trials,
      onIteration: (it: LmIteration) =>
        c.say(
          `Held objects, iteration ${it.iteration}: holding RMS ${mrad(Math.sqrt(it.cost / start.length))} (${it.evaluations} evaluations).`,
        ),
    },
  );
  const { reports, u } = await identify(
    fitParams,
    c.from,
    residualsAt,
    fu0,
    lm,
    start,
    lengths,
    HOLDING_JOINT_INDICES.length,
  );
  return {
    calibration: calibrationAt(c.joints, fitParams, u),
    reports: [...reports, ...unfit],
    leftOut,
    notFitted: [],
  };
}
