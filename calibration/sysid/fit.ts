/**
 * `tandem sysid fit`: from recorded episodes to a new sim calibration record.
 *
 * 1. Read every episode; leave out (with the reason) those the fit must not learn from.
 * 2. Hold the last K out (by file name: the latest takes), fit on the rest.
 * 3. Screen several starting points (the start record and seeded draws inside the bounds) in one
 *    concurrent batch, then Levenberg–Marquardt from the best, every replay on worker threads.
 * 4. Sensitivity from the Jacobian at the optimum: a parameter whose uncertainty spans more than
 *    IDENTIFIABLE_SIGMA_U of its range is *not identified* and keeps its start value, said by name.
 * 5. Before/after RMS per joint on the held-out episodes, the record with its lineage.
 *
 * The fit reads recordings only — never the emulated cell's truth.
 */
import { createRng } from '../../src/layouts/random.js';
import type { RigModel } from '../../src/rig/contract.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import { simCalibrationHash, type SimCalibration } from '../../src/sim/calibration.js';
import { readEpisodeTrajectory, type EpisodeTrajectory } from './episode-trajectory.js';
import { coordinateSigmas, levenbergMarquardt, type LmIteration } from './levenberg-marquardt.js';
import { autocorrelationInflation, fullJacobian, jackknifeSigmas, sumSquares, undoneBy } from './fit-uncertainty.js';
import {
  calibrationAt,
  fitParameters,
  fromUnit,
  objectParameters,
  toUnit,
  unitSlope,
  type FitParameter,
} from './parameters.js';
import {
  ARM_JOINT_INDICES,
  HOLDING_JOINT_INDICES,
  holdingEndS,
  REPLAY_PHASES,
  replayEpisode,
  type ReplayPhase,
} from './replay.js';
import { fitPlotSvg } from './fit-plot.js';
import { basename } from 'node:path';
import { jointNames } from '../../src/record/episode-format.js';
import { ReplayPool, type ReplayReply } from './replay-pool.js';

/** A fit that cannot run; one sentence. */
export class SysidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SysidError';
  }
}

/**
 * When a parameter counts as identified by the episodes: one standard deviation below a quarter
 * of its value (parameters on a log scale: damping, friction, armature), or below a tenth of its
 * range (ratios and delays). Looser, and a fit on a noisy take "identifies" numbers it merely
 * traded against each other.
 */
export const IDENTIFIED_RELATIVE_SIGMA = 0.25;
export const IDENTIFIED_SIGMA_U = 0.1;
/**
 * …and when it carries part of the gap: putting it back to its start value (the others kept)
 * would undo at least this share of what the fit gained. A small term the data barely care about
 * soaks up whatever the twin does not model (on the emulated cell: the motors' quantised MIT
 * frames) and lands several σ from the truth however small its σ; it is not reported as found.
 */
export const IDENTIFIED_SHARE_OF_GAIN = 0.02;
/**
 * The fit replays this much of each episode from its start (every episode, every evaluation);
 * held-out errors use all of each held-out episode. Ten 6 s windows are a minute of rich motion —
 * what the 26 parameters need — at a sixth of the cost of ten whole 20 s takes.
 */
export const DEFAULT_FIT_SECONDS = 6;
/** Starting points screened before the descent (the start record is always one). */
const DEFAULT_STARTS = 3;

export interface SysidFitOptions {
  readonly files: readonly string[];
  readonly model: RigModel;
  /** The record the fit starts from (and whose other fields it keeps). */
  readonly from: SimCalibration;
  /** Episodes held out (default: a fifth, at least one). */
  readonly holdout?: number;
  readonly workers?: number;
  readonly starts?: number;
  readonly seed?: number;
  readonly maxIterations?: number;
  /** Seconds of each episode the fit replays (default DEFAULT_FIT_SECONDS). */
  readonly fitSeconds?: number;
  /** The layout sets of takes recorded with a layout on the table (`--layouts`): the replay places it. */
  readonly layoutSets?: readonly LayoutSet[];
  /**
   * Fit only the held objects, the joints kept as `from` has them (`--objects-only`): for a record
   * whose joints an earlier fit already identified, when new objects or new holding takes come.
   */
  readonly objectsOnly?: boolean;
  readonly onProgress?: (line: string) => void;
}

export interface ParameterReport {
  readonly name: string;
  readonly unit: string;
  readonly start: number;
  readonly fitted: number;
  /** One standard deviation, in the parameter's unit (Infinity: the episodes do not move it at all). */
  readonly sigma: number;
  /** Pinned down by the episodes and carrying part of the gap: a physical estimate. */
  readonly identified: boolean;
  /** Pinned down but carrying under IDENTIFIED_SHARE_OF_GAIN of the gain: kept as fitted, not an estimate to trust (it may soak up what the twin does not model). */
  readonly minor: boolean;
  /** Why it was not fitted at all, when the episodes showed it before the fit (one clause). */
  readonly note?: string;
}

export interface SysidFitResult {
  readonly calibration: SimCalibration;
  readonly calibrationSha256: string;
  readonly fromSha256: string;
  readonly episodes: readonly { readonly file: string; readonly sha256: string; readonly role: 'fit' | 'holdout' }[];
  readonly excluded: readonly { readonly file: string; readonly reason: string }[];
  readonly parameters: readonly ParameterReport[];
  /** Per arm joint (12, left j1…j6, right j1…j6): RMS error on the held-out episodes, rad (free motion); `holding`: over their holding samples (the pitch joints 2–4, HOLDING_JOINT_INDICES), when they hold objects. */
  readonly heldOut: {
    readonly before: readonly number[];
    readonly after: readonly number[];
    readonly beforeAll: number;
    readonly afterAll: number;
    readonly holding?: { readonly samples: number; readonly before: number; readonly after: number };
  };
  /** Fit episodes whose holding samples were left out of the object fit (the replay lost the object), each with the sentence why. */
  readonly holdingLeftOut: readonly { readonly file: string; readonly reason: string }[];
  readonly fitRms: { readonly before: number; readonly after: number };
  readonly starts: readonly { readonly label: string; readonly rmsRad: number }[];
  readonly iterations: number;
  readonly evaluations: number;
  readonly stopped: string;
  readonly wallS: number;
  /** What the fit did not touch, and why. */
  readonly notFitted: readonly string[];
}

export async function fitSysid(o: SysidFitOptions): Promise<SysidFitResult> {
  const t0 = performance.now();
  const say = o.onProgress ?? (() => {});
  const { usable, excluded } = await readUsable(o.files, o.model, o.layoutSets);
  const holdout = o.holdout ?? Math.max(1, Math.floor(usable.length / 5));
  if (usable.length < holdout + 1) {
    throw new SysidError(
      `${usable.length} usable episode${usable.length === 1 ? '' : 's'}${excluded.length ? ` (${excluded.length} left out)` : ''} cannot be split into ${holdout} held out and at least one to fit on; record more takes or lower --holdout.`,
    );
  }
  const sorted = [...usable].sort((a, b) => a.file.localeCompare(b.file));
  const fitEps = sorted.slice(0, sorted.length - holdout);
  const holdEps = sorted.slice(sorted.length - holdout);
  const params = fitParameters(o.from);
  const pool = await ReplayPool.start(
    sorted.map((e) => e.file),
    o.workers,
    o.layoutSets,
  );
  try {
    const fitIdx = fitEps.map((_, i) => i);
    const holdIdx = holdEps.map((_, i) => fitEps.length + i);
    // Residuals per fit episode (set by the data alone: the same for every calibration).
    let episodeLengths: number[] = [];
    /** What made a replay fail, in words, the first time one did (for the refusal below). */
    let replayProblem: string | undefined;
    const residualsAt = async (points: readonly Float64Array[]): Promise<(Float64Array | undefined)[]> => {
      const replies = await pool.replayAll(
        points.map((u) => calibrationAt(o.from, params, u)),
        fitIdx,
        o.fitSeconds ?? DEFAULT_FIT_SECONDS,
      );
      const ok = replies.find((rs) => rs.every((r) => r.problem === undefined));
      // An episode without samples of the phase is no jackknife unit: it adds nothing to leave out.
      if (ok) episodeLengths = ok.map((r) => r.residuals.length).filter((n) => n > 0);
      replayProblem ??= replyProblem(
        replies,
        fitEps.map((e) => e.file),
        'free-motion',
      );
      return replies.map((rs) => concatResiduals(rs));
    };
    const u0 = Float64Array.from(params, (p) => toUnit(p, p.get(o.from)));
    /** The second stage and the hold-out, after the joints' stage (fitted, or kept with --objects-only). */
    const finish = async (j: {
      reports: ParameterReport[];
      u: Float64Array;
      lm: {
        readonly u: Float64Array;
        readonly residuals: Float64Array;
        readonly iterations: number;
        readonly stopped: string;
      };
      starts: SysidFitResult['starts'];
      /** Replays so far (the hold-out's two are added here). */
      evaluations: number;
    }): Promise<SysidFitResult> => {
      const { reports, u, lm, starts, evaluations } = j;
      // Second stage: the held objects, on the holding samples, with the joints as fitted.
      const objects = await fitHeldObjects({
        pool,
        model: o.model,
        from: o.from,
        joints: calibrationAt(o.from, params, u),
        fitEps,
        say,
        maxIterations: o.maxIterations ?? 8,
        trials: Math.max(2, pool.size),
      });
      const fitted = objects.calibration;
      const fromSha256 = simCalibrationHash(o.from);
      // Held out: the start record against the fitted one, on episodes the fit never saw.
      const [before, after] = await pool.replayAll([o.from, fitted], holdIdx);
      const heldOut = {
        before: perJointRms(before),
        after: perJointRms(after),
        beforeAll: overallRms(before),
        afterAll: overallRms(after),
        holding: holdingRms(before, after),
      };
      const [fitAfter] = u.some((x, k) => x !== lm.u[k]) ? await residualsAt([u]) : [lm.residuals];
      const episodes = [
        ...fitEps.map((e) => ({ file: e.file, sha256: e.sha256, role: 'fit' as const })),
        ...holdEps.map((e) => ({ file: e.file, sha256: e.sha256, role: 'holdout' as const })),
      ];
      const calibration: SimCalibration = {
        ...fitted,
        name: `${o.from.name.replace(/-sysid(-\d+)?$/, '')}-sysid`,
        version: o.from.version + 1,
        lineage: {
          method: 'tandem sysid fit',
          fromSha256,
          episodes: episodes.map((e) => ({ file: e.file.split('/').pop()!, sha256: e.sha256, role: e.role })),
          heldOutRmsRad: { before: heldOut.before.map(round6), after: heldOut.after.map(round6) },
        },
      };
      return {
        calibration,
        calibrationSha256: simCalibrationHash(calibration),
        fromSha256,
        episodes,
        excluded,
        parameters: [...reports, ...objects.reports],
        holdingLeftOut: objects.leftOut,
        heldOut,
        fitRms: { before: starts[0].rmsRad, after: fitAfter ? rmsOf(fitAfter) : NaN },
        starts,
        iterations: lm.iterations,
        evaluations: evaluations + 2,
        stopped: lm.stopped,
        wallS: (performance.now() - t0) / 1000,
        notFitted: objects.notFitted,
      };
    };
    /** The joints as `from` has them; the objects fitted and the hold-out judged as in a full fit. */
    const fitObjectsOnly = async (): Promise<SysidFitResult> => {
      const [start] = await residualsAt([u0]);
      if (!start)
        throw new SysidError(
          `The sim cannot replay these episodes with the start record${replayProblem ? `: ${replayProblem}` : ''}.`,
        );
      const kept = 'kept from the start record (--objects-only)';
      const reports = params.map((p) => ({
        name: p.name,
        unit: p.unit,
        start: p.get(o.from),
        fitted: p.get(o.from),
        sigma: Infinity,
        identified: false,
        minor: false,
        note: kept,
      }));
      return finish({
        reports,
        u: u0,
        lm: { u: u0, residuals: start, iterations: 0, stopped: 'the joints were kept (--objects-only)' },
        starts: [{ label: 'start record', rmsRad: rmsOf(start) }],
        evaluations: 1,
      });
    };
    if (o.objectsOnly) return await fitObjectsOnly();
    // Screen starting points: the start record and seeded draws in the middle of the bounds.
    const rng = createRng(o.seed ?? 1);
    const startPoints = [
      u0,
      ...Array.from({ length: Math.max(0, (o.starts ?? DEFAULT_STARTS) - 1) }, () =>
        Float64Array.from(params, () => rng.uniform(0.25, 0.75)),
      ),
    ];
    const startResiduals = await residualsAt(startPoints);
    const starts = startResiduals.map((r, i) => ({
      label: i === 0 ? 'start record' : `draw ${i}`,
      rmsRad: r ? rmsOf(r) : Infinity,
    }));
    say(
      `Starting points (fit RMS over ${fitEps.length} episodes): ${starts.map((s) => `${s.label} ${mrad(s.rmsRad)}`).join(', ')}.`,
    );
    let bestStart = 0;
    starts.forEach((s, i) => {
      if (s.rmsRad < starts[bestStart].rmsRad) bestStart = i;
    });
    if (!Number.isFinite(starts[bestStart].rmsRad))
      throw new SysidError(
        `The sim cannot replay these episodes from any starting point (${firstProblem(startResiduals)}${replayProblem ? `: ${replayProblem}` : ''}).`,
      );
    const groups = groupsOf(params);
    const lm = await levenbergMarquardt(
      {
        dimension: params.length,
        evaluate: residualsAt,
        groups,
        owns: (k, i) => params[k].joint === undefined || params[k].joint === jointOfResidual(i),
      },
      startPoints[bestStart],
      {
        maxIterations: o.maxIterations ?? 8,
        trials: Math.max(2, pool.size),
        onIteration: (it: LmIteration) =>
          say(
            `Iteration ${it.iteration}: fit RMS ${mrad(Math.sqrt(it.cost / startResiduals[bestStart]!.length))} (${it.evaluations} evaluations, ${((performance.now() - t0) / 1000).toFixed(0)} s).`,
          ),
      },
    );
    // Sensitivity: what the episodes pin down, and what they leave loose.
    say(`Sensitivity: ${params.length} replays of the fit episodes, one per parameter.`);
    const { reports, u } = await identify(
      params,
      o.from,
      residualsAt,
      u0,
      lm,
      startResiduals[bestStart]!,
      episodeLengths,
    );
    return await finish({ reports, u, lm, starts, evaluations: lm.evaluations + startPoints.length + params.length });
  } finally {
    await pool.close();
  }
}

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
async function fitHeldObjects(c: {
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

/** RMS over the pitch joints (what the objects' fit reads) of the holding samples of the held-out replays (start record, fitted), or undefined when none holds anything. */
function holdingRms(
  before: readonly ReplayReply[],
  after: readonly ReplayReply[],
): { samples: number; before: number; after: number } | undefined {
  const b = phaseRms(before, 'holding', HOLDING_JOINT_INDICES);
  return b.samples > 0
    ? { samples: b.samples, before: b.rmsRad, after: phaseRms(after, 'holding', HOLDING_JOINT_INDICES).rmsRad }
    : undefined;
}

/** One phase's samples over the replies, and their RMS over the given joints (default the arm joints). */
function phaseRms(
  replies: readonly ReplayReply[],
  phase: ReplayPhase,
  joints: readonly number[] = ARM_JOINT_INDICES,
): { samples: number; rmsRad: number } {
  let samples = 0;
  let sq = 0;
  for (const r of replies) {
    const b = r.byPhase?.[phase];
    if (!b || b.samples === 0) continue;
    samples += b.samples;
    for (const j of joints) sq += b.rmsRad[j] ** 2 * b.samples;
  }
  return { samples, rmsRad: samples > 0 ? Math.sqrt(sq / (samples * joints.length)) : NaN };
}

/** `tandem sysid check`: the tracking error of a calibration on episodes, without fitting. */
export async function checkSysid(o: {
  files: readonly string[];
  model: RigModel;
  calibration: SimCalibration;
  workers?: number;
  layoutSets?: readonly LayoutSet[];
}): Promise<{
  readonly episodes: readonly {
    readonly file: string;
    readonly rmsRad: readonly number[];
    readonly problem?: string;
    readonly lostObject?: string;
  }[];
  readonly excluded: readonly { readonly file: string; readonly reason: string }[];
  readonly perJoint: readonly number[];
  readonly overall: number;
  /** Per phase over every episode: compared samples and RMS over the arm joints, rad. */
  readonly phases: readonly { readonly phase: ReplayPhase; readonly samples: number; readonly rmsRad: number }[];
}> {
  const { usable, excluded } = await readUsable(o.files, o.model, o.layoutSets);
  if (usable.length === 0)
    throw new SysidError(
      `None of the ${o.files.length} episode${o.files.length === 1 ? '' : 's'} can be replayed: ${excluded.map((e) => e.reason).join(' ')}`,
    );
  const pool = await ReplayPool.start(
    usable.map((e) => e.file),
    o.workers,
    o.layoutSets,
  );
  try {
    const [replies] = await pool.replayAll(
      [o.calibration],
      usable.map((_, i) => i),
    );
    return {
      episodes: replies.map((r, i) => ({
        file: usable[i].file,
        rmsRad: ARM_JOINT_INDICES.map((j) => r.rmsRad[j]),
        problem: r.problem,
        lostObject: r.lostObject,
      })),
      excluded,
      perJoint: perJointRms(replies),
      overall: overallRms(replies),
      phases: REPLAY_PHASES.map((phase) => ({ phase, ...phaseRms(replies, phase) })),
    };
  } finally {
    await pool.close();
  }
}

async function readUsable(
  files: readonly string[],
  model: RigModel,
  layoutSets: readonly LayoutSet[] = [],
): Promise<{ usable: EpisodeTrajectory[]; excluded: { file: string; reason: string }[] }> {
  if (files.length === 0)
    throw new SysidError('Give the episode files to fit on (MCAP takes recorded with `tandem teleop record`).');
  const usable: EpisodeTrajectory[] = [];
  const excluded: { file: string; reason: string }[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const t = await readEpisodeTrajectory(f, model, { layoutSets });
    const dup = seen.get(t.sha256);
    if (dup !== undefined) {
      excluded.push({
        file: f,
        reason: `${f.split('/').pop()} is the same recording as ${dup.split('/').pop()} (same SHA-256): counted once.`,
      });
      continue;
    }
    seen.set(t.sha256, f);
    if (t.exclusion) excluded.push({ file: f, reason: t.exclusion });
    else usable.push(t);
  }
  return { usable, excluded };
}

/**
 * Sensitivity at the optimum: a full Jacobian (every parameter alone, so correlations between
 * joints count), with the residuals' autocorrelation taken into account (neighbouring samples are
 * not independent) and the data's own verdict on top of the model's — how far each parameter
 * would move if one episode were left out (a one-step delete-one jackknife): where the model
 * cannot quite match the robot, a parameter that soaks up that mismatch moves episode by episode,
 * however small its σ claims it is. Loose parameters go back to their start value (u0).
 */
async function identify(
  params: readonly FitParameter[],
  from: SimCalibration,
  residualsAt: (p: readonly Float64Array[]) => Promise<(Float64Array | undefined)[]>,
  u0: Float64Array,
  lm: { readonly u: Float64Array; readonly residuals: Float64Array },
  startResiduals: Float64Array,
  episodeLengths: readonly number[],
  width = ARM_JOINT_INDICES.length,
): Promise<{ reports: ParameterReport[]; u: Float64Array }> {
  const fullJ = await fullJacobian(residualsAt, lm.u, lm.residuals);
  const inflation = autocorrelationInflation(lm.residuals, episodeLengths, width);
  const sigmaAr = coordinateSigmas(fullJ, lm.residuals, params.length).map((x) => x * Math.sqrt(inflation));
  const sigmaJack = jackknifeSigmas(fullJ, lm.residuals, params.length, episodeLengths);
  const sigmaU = sigmaAr.map((x, k) => Math.max(x, sigmaJack?.[k] ?? 0));
  const u = Float64Array.from(lm.u);
  const gain = Math.max(0, sumSquares(startResiduals) - sumSquares(lm.residuals));
  const reports = params.map((p, k) => {
    const value = fromUnit(p, lm.u[k]);
    const sigma = sigmaU[k] * unitSlope(p, lm.u[k]);
    const precise = p.log ? sigma < IDENTIFIED_RELATIVE_SIGMA * value : sigmaU[k] < IDENTIFIED_SIGMA_U;
    const important =
      undoneBy(fullJ, lm.residuals, params.length, k, u0[k] - lm.u[k]) >= IDENTIFIED_SHARE_OF_GAIN * gain;
    // Loose: the episodes do not pin it down, so it keeps the start value. Precise but minor:
    // kept as fitted (the record tracks better with it), reported as no physical estimate.
    if (!precise) u[k] = u0[k];
    return {
      name: p.name,
      unit: p.unit,
      start: p.get(from),
      fitted: precise ? value : p.get(from),
      sigma,
      identified: precise && important,
      minor: precise && !important,
    };
  });
  return { reports, u };
}

function groupsOf(params: readonly FitParameter[]): number[][] {
  const byGroup = new Map<string, number[]>();
  params.forEach((p, k) => {
    const g = byGroup.get(p.group);
    if (g) g.push(k);
    else byGroup.set(p.group, [k]);
  });
  return [...byGroup.values()];
}

/** Residuals come 12 per sample (ARM_JOINT_INDICES): left j1…j6, right j1…j6. */
function jointOfResidual(i: number): number {
  return (i % ARM_JOINT_INDICES.length) % 6;
}

/**
 * One evaluation's residuals, episode after episode; undefined when a replay failed or nothing was
 * compared. An episode with no samples of the phase (a rollout that grasps right after the
 * burn-in has no free motion in the window) adds none: the phases come from the measurements, so
 * it adds none at every point, and the vector keeps its length.
 */
export function concatResiduals(
  replies: readonly ReplayReply[],
  which: 'residuals' | 'holdingResiduals' = 'residuals',
): Float64Array | undefined {
  const parts = replies.map((r) => r[which] ?? new Float64Array(0));
  if (replies.some((r) => r.problem !== undefined) || parts.every((p) => p.length === 0)) return undefined;
  const out = new Float64Array(parts.reduce((s, r) => s + r.length, 0));
  let o = 0;
  for (const r of parts) {
    out.set(r, o);
    o += r.length;
  }
  return out;
}

/** The first failed replay of an evaluation batch, or a batch with nothing to compare, in words. */
function replyProblem(
  batches: readonly (readonly ReplayReply[])[],
  files: readonly string[],
  phase: string,
): string | undefined {
  for (const rs of batches) {
    const i = rs.findIndex((r) => r.problem !== undefined);
    if (i >= 0) return `${basename(files[i] ?? '')}: ${rs[i].problem}`;
  }
  if (batches.length > 0 && batches.every((rs) => rs.every((r) => r.residuals.length === 0)))
    return `no episode has ${phase} samples in the fitted window`;
  return undefined;
}

function firstProblem(rs: readonly (Float64Array | undefined)[]): string {
  return rs.every((r) => r === undefined) ? 'every replay failed' : 'some replays failed';
}

function rmsOf(r: Float64Array): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += r[i] * r[i];
  return Math.sqrt(s / Math.max(1, r.length));
}

/** Mean over episodes of each arm joint's squared RMS, rooted (episodes weigh alike). */
function perJointRms(replies: readonly ReplayReply[]): number[] {
  return ARM_JOINT_INDICES.map((j) =>
    Math.sqrt(replies.reduce((s, r) => s + (r.rmsRad[j] ?? NaN) ** 2, 0) / replies.length),
  );
}

function overallRms(replies: readonly ReplayReply[]): number {
  const pj = perJointRms(replies);
  return Math.sqrt(pj.reduce((s, x) => s + x * x, 0) / pj.length);
}

export function mrad(x: number): string {
  return Number.isFinite(x) ? `${(x * 1000).toFixed(2)} mrad` : '—';
}

function round6(x: number): number {
  return Number(x.toPrecision(6));
}

/**
 * The plot `--plot` writes: the held-out joint with the largest error after the fit, on the first
 * held-out episode, replayed with the start record and the fitted one (in this thread).
 */
export async function worstJointPlot(
  result: SysidFitResult,
  model: RigModel,
  from: SimCalibration,
  layoutSets: readonly LayoutSet[] = [],
): Promise<string> {
  const held = result.episodes.find((e) => e.role === 'holdout');
  if (!held) throw new SysidError('The fit held no episode out, so there is nothing to plot.');
  let worst = 0;
  result.heldOut.after.forEach((v, k) => {
    if (v > result.heldOut.after[worst]) worst = k;
  });
  const j = ARM_JOINT_INDICES[worst];
  const traj = await readEpisodeTrajectory(held.file, model, { layoutSets });
  const a = await replayEpisode(traj, model, from);
  const b = await replayEpisode(traj, model, result.calibration);
  const pick = (
    r: { measured: Float64Array; simulated: Float64Array },
    which: 'measured' | 'simulated',
  ): Float64Array => Float64Array.from({ length: r.measured.length / 14 }, (_, i) => r[which][i * 14 + j]);
  const name = jointNames(model)[j];
  return fitPlotSvg({
    title: `${name} on held-out ${held.file.split('/').pop()}: RMS ${mrad(result.heldOut.before[worst])} → ${mrad(result.heldOut.after[worst])}`,
    jointName: name,
    timesS: a.timesS,
    measured: pick(a, 'measured'),
    before: pick(a, 'simulated'),
    after: pick(b, 'simulated'),
    beforeLabel: `sim, ${from.name} v${from.version}`,
    afterLabel: `sim, ${result.calibration.name} v${result.calibration.version}`,
  });
}
