/**
 * Resampling an episode's streams onto a dataset's fixed frame rate, with the gap rule stated.
 *
 * Training code (LeRobot, openpi) reads one row per tick at a constant fps; the recording has
 * joint states at the control rate and camera frames as they arrived. For each tick this takes,
 * per stream, the newest sample at or before the tick (never one from the future: a policy at
 * that instant could not have seen it).
 *
 * The gap rule: a stream is *late* at a tick when its newest sample is older than its limit —
 * 1.5 of its own periods for a camera, 2 control periods for joint states and commands (the
 * periods are the stream's median spacing in this episode). A late tick repeats the newest
 * sample and is counted (the export reports it per stream). A stream that stays late for longer
 * than `maxGapS` (a camera lost, a stalled rig) ends the episode at the last tick before the
 * gap: frozen images beside a moving arm would teach a policy the wrong thing, so the exported
 * episode is the part before it, and the export says so.
 */

export interface StreamTimes {
  /** Stream name as the report says it (`/joint_states`, `camera cam_high`). */
  readonly name: string;
  /** Sample times (s), ascending. */
  readonly timesS: Float64Array;
  /** A sample older than this at a tick makes the tick late. */
  readonly lateAfterS: number;
}

export interface StreamPicks {
  readonly name: string;
  /** Per tick, the index (into timesS) of the sample the tick takes. */
  readonly index: Int32Array;
  /** Ticks that repeated an old sample (older than lateAfterS). */
  readonly lateTicks: number;
  /** Longest age of a taken sample (s). */
  readonly oldestS: number;
}

export interface CutReason {
  readonly stream: string;
  /** Seconds, on the streams' time line, when the stream's last sample before the gap arrived. */
  readonly lastSampleS: number;
  /** How long the stream had nothing new when the episode was cut (at least maxGapS). */
  readonly gapS: number;
}

export interface Resampled {
  /** Time (s, the streams' time line) of tick 0; tick k is at startS + k / fps. */
  readonly startS: number;
  readonly ticks: number;
  readonly streams: readonly StreamPicks[];
  /** Why the episode ends before its streams do (undefined: it ran to the end). */
  readonly cut: CutReason | undefined;
}

/** Median spacing of ascending times (0 with fewer than two). */
export function medianPeriodS(timesS: Float64Array): number {
  if (timesS.length < 2) return 0;
  const d = new Float64Array(timesS.length - 1);
  for (let i = 1; i < timesS.length; i++) d[i - 1] = timesS[i] - timesS[i - 1];
  d.sort();
  const m = d.length >> 1;
  return d.length % 2 ? d[m] : (d[m - 1] + d[m]) / 2;
}

/**
 * The ticks of one episode: from the first instant every stream has a sample to the last
 * instant every stream still has one, cut at the first gap longer than maxGapS.
 */
export function resample(streams: readonly StreamTimes[], fps: number, maxGapS: number): Resampled {
  if (streams.some((s) => s.timesS.length === 0)) {
    return {
      startS: 0,
      ticks: 0,
      streams: streams.map((s) => ({ name: s.name, index: new Int32Array(0), lateTicks: 0, oldestS: 0 })),
      cut: undefined,
    };
  }
  const startS = Math.max(...streams.map((s) => s.timesS[0]));
  const endS = Math.min(...streams.map((s) => s.timesS[s.timesS.length - 1]));
  // A tick within a nanosecond of the end still counts (k / fps is not exact in binary).
  const total = endS < startS ? 0 : Math.floor((endS - startS) * fps + 1e-6) + 1;
  const picks = streams.map(() => new Int32Array(total));
  const cursor = streams.map(() => 0);
  const late = streams.map(() => 0);
  const oldest = streams.map(() => 0);
  let ticks = total;
  let cut: CutReason | undefined;
  for (let k = 0; k < total && cut === undefined; k++) {
    const t = startS + k / fps;
    for (let s = 0; s < streams.length; s++) {
      const times = streams[s].timesS;
      let i = cursor[s];
      while (i + 1 < times.length && times[i + 1] <= t + 1e-9) i++;
      cursor[s] = i;
      const ageS = t - times[i];
      if (ageS > maxGapS) {
        // The gap has lasted longer than allowed at this tick: the episode ends before it began.
        const firstLateTick = Math.floor((times[i] + streams[s].lateAfterS - startS) * fps) + 1;
        ticks = Math.max(0, Math.min(k, firstLateTick));
        const next = i + 1 < times.length ? times[i + 1] : Infinity;
        cut = { stream: streams[s].name, lastSampleS: times[i], gapS: Math.min(next, endS) - times[i] };
        break;
      }
      picks[s][k] = i;
    }
  }
  const result: StreamPicks[] = streams.map((st, s) => {
    const index = picks[s].subarray(0, ticks);
    for (let k = 0; k < ticks; k++) {
      const ageS = startS + k / fps - st.timesS[index[k]];
      if (ageS > st.lateAfterS) late[s] += 1;
      if (ageS > oldest[s]) oldest[s] = ageS;
    }
    return { name: st.name, index, lateTicks: late[s], oldestS: oldest[s] };
  });
  return { startS, ticks, streams: result, cut };
}
