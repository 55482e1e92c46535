/**
 * Per-object outcomes with times, PhAIL's throughput metrics beside task progress: when each
 * object became done (time to success), the time-to-success curve per policy and side, units per
 * hour and mean time between failures. Pure: the paired report calls it with its scored rollouts.
 *
 * Where a time comes from, one rule for every rig:
 * - the rollout's task events (the sim twin, the emulated cell's table): the `progress` events
 *   give the done count over time; the k-th unit's time is when the count last rose to k and
 *   stayed there to the end (a bottle in the bin, knocked out, put back: its second entry counts).
 *   A unit is named by the `entered-region` event at that instant when the task scores by region.
 * - else the operator's "object done" marks of a session rollout (a keypress while the rig runs:
 *   journalled with its episode second), as many as the score counts done.
 * - else it has no times: its units still count in units per hour and failures, not in the curve.
 */
import type { TaskEvent } from '../tasks/task-events.js';

/** What a rollout needs here: its scored units, when each was done, and its episode length. */
export interface TimedRollout {
  readonly id: number;
  /** Objects the task's progress counts (progressUnits of its layout). */
  readonly units: number;
  /** Units done by the score (progress × units, rounded). */
  readonly done: number;
  readonly episodeSeconds: number;
  readonly taskEvents?: readonly TaskEvent[] | null;
  /** The operator's marks: episode seconds at which an object was done (an object id when the operator named it). */
  readonly doneMarks?: readonly { readonly tS: number; readonly objectId?: string }[] | null;
  /** Region the task scores an object done in, by object id (bottles: bin; parts: their slot); absent for mugs. */
  readonly targetRegionOf?: (objectId: string) => string | undefined;
  /** Object kind by id, for naming a timed unit. */
  readonly kindOf?: (objectId: string) => string | undefined;
  /** Times the operator took over with the leader arm during it (an assisted rollout); absent: none recorded. */
  readonly assists?: number;
}

export interface UnitTime {
  readonly rolloutId: number;
  /** Episode seconds from step 0 to the moment it was done for good. */
  readonly tS: number;
  /** The object, when the events or the operator named it. */
  readonly objectId: string | null;
  readonly kind: string | null;
  readonly source: 'task-events' | 'operator-marks';
}

export interface CurvePoint {
  readonly tS: number;
  /** Units done by tS ÷ all target units of the timed rollouts. */
  readonly fraction: number;
}

export interface ThroughputSummary {
  readonly rollouts: number;
  readonly units: number;
  readonly unitsDone: number;
  /** Failures: target units not done at the end (each a unit the cell would need a person for). */
  readonly failures: number;
  /**
   * Busy hours: per rollout, the time of its last success when it did every unit (a cell would
   * start the next job then), else its whole episode.
   */
  readonly busyHours: number;
  /** Units per hour: unitsDone ÷ busyHours. */
  readonly unitsPerHour: number | null;
  /** Mean time between failures, hours: busyHours ÷ failures; null with no failure. */
  readonly mtbfHours: number | null;
  /** Operator takeovers (PhAIL's assists), the rollouts with any, assists per busy hour and the mean time between assists (hours; null with none). */
  readonly assists: number;
  readonly assistedRollouts: number;
  readonly assistsPerHour: number | null;
  readonly mtbaHours: number | null;
  /** Rollouts with times (events or marks), and how many units they had to do. */
  readonly timedRollouts: number;
  readonly timedUnits: number;
  /** Rollouts without any timing source: in the counts above, not in the curve. */
  readonly untimedRolloutIds: readonly number[];
  /** Every unit's time to success, in time order. */
  readonly times: readonly UnitTime[];
  /** The time-to-success curve: a step at each success time (starting at 0). */
  readonly curve: readonly CurvePoint[];
  /** Median time to success of the units done (timed rollouts). */
  readonly medianS: number | null;
  /** When half of the timed rollouts' units were done; null when fewer than half ever were. */
  readonly halfDoneS: number | null;
}

/** The k-th unit's time (k = 1…done): when the done count last rose to k and stayed at or above it. */
function unitTimesFromProgress(events: readonly TaskEvent[], done: number): number[] | null {
  const progress = events.filter((e) => e.kind === 'progress' && typeof e.done === 'number');
  if (progress.length === 0) return done === 0 ? [] : null;
  const reached: number[] = [];
  let count = 0;
  for (const e of progress) {
    const d = e.done!;
    for (let k = count + 1; k <= d; k++) reached[k - 1] = e.timeS;
    reached.length = Math.min(reached.length, d);
    count = d;
  }
  // The score is what counts: the events must account for at least as many done as it has.
  if (count < done) return null;
  return reached.slice(0, done);
}

function rolloutTimes(r: TimedRollout): UnitTime[] | null {
  if (r.done === 0) return [];
  const events = r.taskEvents ?? [];
  if (events.length > 0) {
    const ts = unitTimesFromProgress(events, r.done);
    if (ts) {
      const named = new Set<string>();
      return ts.map((tS) => {
        // The object that entered its own target region at that instant is the unit done then.
        const e = events.find(
          (x) =>
            x.kind === 'entered-region' &&
            x.timeS === tS &&
            x.objectId !== undefined &&
            !named.has(x.objectId) &&
            r.targetRegionOf?.(x.objectId) === x.region,
        );
        if (e) named.add(e.objectId!);
        return {
          rolloutId: r.id,
          tS,
          objectId: e?.objectId ?? null,
          kind: e ? (r.kindOf?.(e.objectId!) ?? null) : null,
          source: 'task-events' as const,
        };
      });
    }
  }
  const marks = r.doneMarks ?? [];
  if (marks.length >= r.done) {
    // The score says how many were done; the operator's marks say when (the latest marks win: an
    // object marked, then knocked out and put back, was done at its last mark).
    const sorted = [...marks].sort((a, b) => a.tS - b.tS).slice(marks.length - r.done);
    return sorted.map((m) => ({
      rolloutId: r.id,
      tS: m.tS,
      objectId: m.objectId ?? null,
      kind: m.objectId ? (r.kindOf?.(m.objectId) ?? null) : null,
      source: 'operator-marks' as const,
    }));
  }
  return null;
}

const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Throughput and time-to-success of one policy on one side, over its scored rollouts. */
export function throughputSummary(rollouts: readonly TimedRollout[]): ThroughputSummary {
  let units = 0;
  let unitsDone = 0;
  let busyS = 0;
  let timedUnits = 0;
  let assists = 0;
  let assistedRollouts = 0;
  const times: UnitTime[] = [];
  const untimed: number[] = [];
  for (const r of rollouts) {
    units += r.units;
    unitsDone += r.done;
    assists += r.assists ?? 0;
    if ((r.assists ?? 0) > 0) assistedRollouts += 1;
    const ts = rolloutTimes(r);
    if (ts === null) untimed.push(r.id);
    else {
      timedUnits += r.units;
      times.push(...ts);
    }
    const last = ts && ts.length > 0 ? Math.max(...ts.map((t) => t.tS)) : null;
    busyS += r.done === r.units && r.units > 0 && last !== null ? Math.min(last, r.episodeSeconds) : r.episodeSeconds;
  }
  times.sort((a, b) => a.tS - b.tS || a.rolloutId - b.rolloutId);
  const curve: CurvePoint[] = [{ tS: 0, fraction: 0 }];
  let halfDoneS: number | null = null;
  times.forEach((t, i) => {
    const fraction = (i + 1) / timedUnits;
    if (halfDoneS === null && fraction >= 0.5) halfDoneS = t.tS;
    if (curve.at(-1)!.tS === t.tS) curve[curve.length - 1] = { tS: t.tS, fraction };
    else curve.push({ tS: t.tS, fraction });
  });
  const busyHours = busyS / 3600;
  const failures = units - unitsDone;
  return {
    rollouts: rollouts.length,
    units,
    unitsDone,
    failures,
    busyHours,
    unitsPerHour: busyHours > 0 ? unitsDone / busyHours : null,
    mtbfHours: failures > 0 ? busyHours / failures : null,
    assists,
    assistedRollouts,
    assistsPerHour: busyHours > 0 ? assists / busyHours : null,
    mtbaHours: assists > 0 ? busyHours / assists : null,
    timedRollouts: rollouts.length - untimed.length,
    timedUnits,
    untimedRolloutIds: untimed,
    times,
    curve,
    medianS: median(times.map((t) => t.tS)),
    halfDoneS,
  };
}
