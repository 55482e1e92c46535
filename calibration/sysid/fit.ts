/**
 * `tandem sysid fit`: from recorded episodes to a new sim calibration record.
 *
 * 1. Read every episode; leave out (with the reason) those the fit must not learn from.
 * 2. Hold the last K out (by file name: the latest takes), fit on the rest.
 * 3. Screen several starting points (the start record and seeded draws inside the bounds) in one
 *    concurrent batch, then Levenberg–Marquardt from the best, every replay on worker threads.
 * 4. Sensitivity from the Jacobian at the optimum: a parameter whose uncertainty spans more than
 *    IDENTIFIED_SIGMA_U of its range is *not identified* (identify.ts) and keeps its start value, said by name.
 * 5. Before/after RMS per joint on the held-out episodes, the record with its lineage.
 *
 * The fit reads recordings only — never the emulated cell's truth.
 */
import { createRng } from '../../src/layouts/random.js';
import type { RigModel } from '../../src/rig/contract.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';
import { simCalibrationHash, type SimCalibration } from '../../src/sim/calibration.js';
import { jointNames } from '../../src/record/episode-format.js';
import { readEpisodeTrajectory } from './episode-trajectory.js';
import { levenbergMarquardt, type LmIteration } from './levenberg-marquardt.js';
import { calibrationAt, fitParameters, toUnit, type FitParameter } from './parameters.js';
import { ARM_JOINT_INDICES, replayEpisode } from './replay.js';
import { ReplayPool } from './replay-pool.js';
import { fitPlotSvg } from './fit-plot.js';
import { fitHeldObjects } from './held-objects-fit.js';
import { identify, type ParameterReport } from './identify.js';
import {
  concatResiduals,
  firstProblem,
  holdingRms,
  mrad,
  overallRms,
  perJointRms,
  replyProblem,
  rmsOf,
  round6,
} from './residuals.js';
import { SysidError } from './sysid-error.js';
import { readUsable } from './usable-episodes.js';

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
