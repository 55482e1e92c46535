/**
 * The sim-twin drift alarm: on one layout set, does the sim still rank and score policies the way
 * the real rig does — evaluation after evaluation? The rig changes under the twin (a gripper pad
 * wears, a motor is swapped, the table is re-waxed); the twin only changes when someone
 * recalibrates it. This tracks the paired report's agreement measures (Pearson r and MMRV across
 * policies, SIMPLER's definitions; and the mean |sim − real| of the policies' means) over the
 * real evaluations in time order, each against the current sim calibration, and says when they
 * crossed a threshold: "the sim no longer ranks like the rig since …: recalibrate with tandem sysid".
 * Pure: the store's rows come in, numbers and one sentence go out.
 */
import { mmrv, pearson, type PolicyPair } from './correlation.js';

/** What the drift tracker needs of one valid, scored rollout. */
export interface DriftRollout {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  /** The policy's key (spec + checkpoint), and what people call it. */
  readonly policy: string;
  readonly label: string;
  readonly layoutIndex: number;
  readonly episodeSeconds: number;
  readonly progress: number;
  /** Sim: the calibration it ran with (the sim calibration's hash, or a randomization spec's); real: ignored. */
  readonly calibration: string;
  /** Real: the evaluation session it ran in, or null for a rollout outside a session. */
  readonly sessionId: number | null;
  /** ISO 8601. */
  readonly startedAt: string;
}

export interface DriftThresholds {
  /** Alarm when Pearson r across policies falls below this (needs 3 policies). */
  readonly minPearson: number;
  /** Alarm when MMRV rises above this (needs 2 policies). */
  readonly maxMmrv: number;
  /** Alarm when the mean over policies of |sim mean − real mean| rises above this. */
  readonly maxMeanAbsGap: number;
  /** Each point pools the real results of this many evaluations, the latest last (2-policy A/B sessions need company for r). */
  readonly windowEvaluations: number;
}

/**
 * Defaults: SIMPLER's sims that track the real robot reach r 0.77–0.98 and MMRV 0–0.12 per task,
 * and the reference lab's 15 policies MMRV 0.094 — an r under 0.7 or an MMRV over 0.15 is outside
 * what a working twin shows; a quarter of full progress between sim and real means is a twin that
 * no longer scores like the rig even when it still ranks. Three evaluations per point.
 */
export const DEFAULT_DRIFT_THRESHOLDS: DriftThresholds = {
  minPearson: 0.7,
  maxMmrv: 0.15,
  maxMeanAbsGap: 0.25,
  windowEvaluations: 3,
};

const THRESHOLD_KEYS = Object.keys(DEFAULT_DRIFT_THRESHOLDS) as (keyof DriftThresholds)[];

/** Checks thresholds given in a config or on the command line; throws RangeError with one sentence naming the field. */
export function checkDriftThresholds(raw: unknown, where: string): Partial<DriftThresholds> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new RangeError(
      `${where} must be an object like {"minPearson": 0.7, "maxMmrv": 0.15, "maxMeanAbsGap": 0.25, "windowEvaluations": 3}`,
    );
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!(THRESHOLD_KEYS as string[]).includes(k))
      throw new RangeError(`${where} has '${k}', which is not a drift threshold (${THRESHOLD_KEYS.join(', ')})`);
  const num = (k: keyof DriftThresholds, ok: (x: number) => boolean, range: string): void => {
    if (o[k] !== undefined && !(typeof o[k] === 'number' && ok(o[k])))
      throw new RangeError(`${where}: ${k} must be ${range}, not ${JSON.stringify(o[k])}`);
  };
  num('minPearson', (x) => x >= -1 && x <= 1, 'a number from -1 to 1');
  num('maxMmrv', (x) => x >= 0 && x <= 1, 'a number from 0 to 1');
  num('maxMeanAbsGap', (x) => x >= 0 && x <= 1, 'a number from 0 to 1');
  num('windowEvaluations', (x) => Number.isSafeInteger(x) && x >= 1, 'a whole number of at least 1');
  return o as Partial<DriftThresholds>;
}

/** One real evaluation: a session, or the real rollouts of one UTC day run outside any session. */
export interface DriftEvaluation {
  readonly sessionId: number | null;
  /** The day (UTC) of a no-session group; a session's first day. */
  readonly day: string;
  readonly firstAt: string;
  readonly lastAt: string;
  readonly realRolloutIds: readonly number[];
  /** In words: "session 4" or "rollouts of 2026-12-01 outside a session". */
  readonly name: string;
}

export type DriftMetric = 'pearson' | 'mmrv' | 'meanAbsGap';

export interface DriftPoint {
  /** The evaluation this point ends with; the window is it and the ones before it. */
  readonly evaluation: DriftEvaluation;
  readonly window: readonly string[];
  /** Per policy, its sim and real means over the layouts it ran on the rig in the window. */
  readonly pairs: readonly (PolicyPair & { readonly layouts: number; readonly realRollouts: number })[];
  readonly pearson: number | null;
  readonly pearsonUndefinedBecause?: string;
  readonly mmrv: number | null;
  readonly meanAbsGap: number;
  readonly breaches: readonly { readonly metric: DriftMetric; readonly value: number; readonly threshold: number }[];
  readonly status: 'ok' | 'drift';
}

export interface SimDrift {
  readonly simCalibration: string | null;
  readonly thresholds: DriftThresholds;
  readonly points: readonly DriftPoint[];
  /** Set when the latest point is beyond a threshold: since when, and what to do. */
  readonly alarm: {
    readonly since: DriftEvaluation;
    readonly sinceAt: string;
    readonly metrics: readonly DriftMetric[];
    readonly sentence: string;
  } | null;
  /** One sentence for the report and the Rig page: the alarm, all well, or why nothing can be said. */
  readonly sentence: string;
  /** Real rollouts with no sim result of the same policy, layout and episode length under that calibration: not tracked. */
  readonly unpairedRealRollouts: number;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const METRIC_WORDS: Readonly<Record<DriftMetric, string>> = {
  pearson: 'Pearson r',
  mmrv: 'MMRV',
  meanAbsGap: 'mean |sim − real|',
};

function evaluationsOf(real: readonly DriftRollout[]): { evaluation: DriftEvaluation; rows: DriftRollout[] }[] {
  const groups = new Map<string, DriftRollout[]>();
  for (const r of real) {
    const k = r.sessionId !== null ? `s${r.sessionId}` : `d${r.startedAt.slice(0, 10)}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()]
    .map((rows) => {
      const at = rows.map((r) => r.startedAt).sort();
      const sessionId = rows[0].sessionId;
      const day = at[0].slice(0, 10);
      return {
        evaluation: {
          sessionId,
          day,
          firstAt: at[0],
          lastAt: at.at(-1)!,
          realRolloutIds: rows.map((r) => r.id),
          name: sessionId !== null ? `session ${sessionId}` : `rollouts of ${day} outside a session`,
        },
        rows,
      };
    })
    .sort((a, b) =>
      a.evaluation.firstAt < b.evaluation.firstAt ? -1 : a.evaluation.firstAt > b.evaluation.firstAt ? 1 : 0,
    );
}

/**
 * The agreement after each real evaluation on one layout set, against one sim calibration (the
 * one given, else the one the newest sim rollout ran with: the twin in use), and the alarm.
 */
export function simDrift(
  rollouts: readonly DriftRollout[],
  options: { readonly thresholds?: Partial<DriftThresholds>; readonly simCalibration?: string } = {},
): SimDrift {
  const thresholds: DriftThresholds = { ...DEFAULT_DRIFT_THRESHOLDS, ...options.thresholds };
  const sims = rollouts.filter((r) => r.kind === 'sim');
  const newest = [...sims].sort((a, b) =>
    a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : b.id - a.id,
  )[0];
  const simCalibration = options.simCalibration ?? newest?.calibration ?? null;
  const cell = (policy: string, layout: number, seconds: number): string => `${policy}\u0000${layout}\u0000${seconds}`;
  const simBy = new Map<string, number[]>();
  for (const s of sims)
    if (s.calibration === simCalibration)
      simBy.set(cell(s.policy, s.layoutIndex, s.episodeSeconds), [
        ...(simBy.get(cell(s.policy, s.layoutIndex, s.episodeSeconds)) ?? []),
        s.progress,
      ]);
  const real = rollouts.filter((r) => r.kind === 'real');
  const paired = real.filter((r) => simBy.has(cell(r.policy, r.layoutIndex, r.episodeSeconds)));
  const evaluations = evaluationsOf(paired);
  const points: DriftPoint[] = evaluations.map((e, i) => {
    const window = evaluations.slice(Math.max(0, i - thresholds.windowEvaluations + 1), i + 1);
    // Per policy: real averaged per layout cell first (each layout counts once, as in the report), then over cells.
    const byPolicy = new Map<string, { label: string; cells: Map<string, number[]> }>();
    for (const r of window.flatMap((w) => w.rows)) {
      let p = byPolicy.get(r.policy);
      if (!p) byPolicy.set(r.policy, (p = { label: r.label, cells: new Map() }));
      const k = cell(r.policy, r.layoutIndex, r.episodeSeconds);
      p.cells.set(k, [...(p.cells.get(k) ?? []), r.progress]);
    }
    const pairs = [...byPolicy.values()].map((p) => {
      const cells = [...p.cells];
      return {
        policy: p.label,
        sim: mean(cells.map(([k]) => mean(simBy.get(k)!))),
        real: mean(cells.map(([, v]) => mean(v))),
        layouts: cells.length,
        realRollouts: cells.reduce((a, [, v]) => a + v.length, 0),
      };
    });
    const pr =
      pairs.length >= 3
        ? pearson(pairs)
        : { r: null, undefinedBecause: `needs 3 policies, the window has ${pairs.length}` };
    const m = pairs.length >= 2 ? mmrv(pairs) : null;
    const gap = mean(pairs.map((p) => Math.abs(p.sim - p.real)));
    const breaches: DriftPoint['breaches'][number][] = [];
    if (pr.r !== null && pr.r < thresholds.minPearson)
      breaches.push({ metric: 'pearson', value: pr.r, threshold: thresholds.minPearson });
    if (m !== null && m > thresholds.maxMmrv)
      breaches.push({ metric: 'mmrv', value: m, threshold: thresholds.maxMmrv });
    if (gap > thresholds.maxMeanAbsGap)
      breaches.push({ metric: 'meanAbsGap', value: gap, threshold: thresholds.maxMeanAbsGap });
    return {
      evaluation: e.evaluation,
      window: window.map((w) => w.evaluation.name),
      pairs,
      pearson: pr.r,
      ...(pr.r === null && pr.undefinedBecause ? { pearsonUndefinedBecause: pr.undefinedBecause } : {}),
      mmrv: m,
      meanAbsGap: gap,
      breaches,
      status: breaches.length ? 'drift' : 'ok',
    };
  });
  const last = points.at(-1);
  let alarm: SimDrift['alarm'] = null;
  let sentence: string;
  if (simCalibration === null) sentence = 'No sim rollouts on this layout set: nothing to compare the rig with.';
  else if (!last)
    sentence = `No real rollout on this layout set pairs with a sim result of the current sim calibration (${simCalibration.slice(0, 12)}…): nothing to track yet.`;
  else if (last.status === 'drift') {
    let first = points.length - 1;
    while (first > 0 && points[first - 1].status === 'drift') first -= 1;
    const since = points[first].evaluation;
    const metrics = last.breaches.map((b) => b.metric);
    const said = last.breaches
      .map(
        (b) => `${METRIC_WORDS[b.metric]} ${b.value.toFixed(2)} ${b.metric === 'pearson' ? '<' : '>'} ${b.threshold}`,
      )
      .join(', ');
    const verb = metrics.some((x) => x !== 'meanAbsGap') ? 'ranks' : 'scores';
    sentence = `The sim no longer ${verb} like the rig since ${since.name} (${since.firstAt.slice(0, 10)}): ${said} over ${last.window.join(', ')}; recalibrate with tandem sysid.`;
    alarm = { since, sinceAt: since.firstAt, metrics, sentence };
  } else {
    sentence = `The sim agrees with the rig after ${last.evaluation.name} (${last.evaluation.lastAt.slice(0, 10)}): ${last.pearson === null ? 'Pearson r –' : `Pearson r ${last.pearson.toFixed(2)}`}, ${last.mmrv === null ? 'MMRV –' : `MMRV ${last.mmrv.toFixed(2)}`}, mean |sim − real| ${last.meanAbsGap.toFixed(2)} over ${last.pairs.length} polic${last.pairs.length === 1 ? 'y' : 'ies'}, within the thresholds.`;
  }
  return { simCalibration, thresholds, points, alarm, sentence, unpairedRealRollouts: real.length - paired.length };
}
