/**
 * A real episode beside its sim twin, for the compare view's replay: the joint states of both
 * episode files (read with src/record's reader), thinned to at most MAX_SAMPLES for the page, and
 * the joint error sim − real at the real episode's times. Both are timed from their first joint
 * state: the loop starts stepping there on the rig and in the sim alike.
 */
import { readEpisodeStreams, type EpisodeStreams } from '../record/episode-streams.js';
import type { RolloutRecord } from '../store/records.js';
import type { JointTrace, ReplayView } from './api-types.js';

/** Samples sent per trace: 25 Hz over a minute, plenty for a scrubber and a plot. */
export const MAX_SAMPLES = 1500;

export function traceOf(r: RolloutRecord, s: Pick<EpisodeStreams, 'jointNames' | 'states'>): JointTrace {
  const n = s.states.timesS.length;
  const width = s.jointNames.length;
  const stride = Math.max(1, Math.ceil(n / MAX_SAMPLES));
  const t0 = n ? s.states.timesS[0] : 0;
  const timesS: number[] = [];
  const positions: number[][] = [];
  for (let i = 0; i < n; i += stride) {
    timesS.push(s.states.timesS[i] - t0);
    positions.push(Array.from(s.states.positions.subarray(i * width, (i + 1) * width)));
  }
  return {
    rolloutId: r.id,
    kind: r.kind,
    status: r.status,
    progress: r.effectiveProgress,
    jointNames: s.jointNames,
    timesS,
    positions,
  };
}

/** Linear interpolation of column `j` of a trace at time t; null outside it. */
function at(trace: JointTrace, j: number, t: number): number | null {
  const ts = trace.timesS;
  if (ts.length === 0 || t < ts[0] || t > ts[ts.length - 1]) return null;
  let lo = 0;
  let hi = ts.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (ts[mid] <= t) lo = mid;
    else hi = mid;
  }
  const span = ts[hi] - ts[lo];
  const f = span > 0 ? (t - ts[lo]) / span : 0;
  return trace.positions[lo][j] + f * (trace.positions[hi][j] - trace.positions[lo][j]);
}

export function replayView(real: JointTrace, sim: JointTrace | null, simNote: string | null): ReplayView {
  if (!sim) return { real, sim: null, simNote, errorJointNames: [], errorRad: [], rmsErrorRad: [] };
  const names = real.jointNames.filter((n) => sim.jointNames.includes(n));
  const realCol = names.map((n) => real.jointNames.indexOf(n));
  const simCol = names.map((n) => sim.jointNames.indexOf(n));
  const sq = names.map(() => 0);
  const cnt = names.map(() => 0);
  const errorRad = real.timesS.map((t, i) =>
    names.map((_, k) => {
      const s = at(sim, simCol[k], t);
      if (s === null) return null;
      const e = s - real.positions[i][realCol[k]];
      sq[k] += e * e;
      cnt[k] += 1;
      return e;
    }),
  );
  return {
    real,
    sim,
    simNote,
    errorJointNames: names,
    errorRad,
    rmsErrorRad: names.map((_, k) => (cnt[k] ? Math.sqrt(sq[k] / cnt[k]) : null)),
  };
}

/**
 * The real rollout to replay on a layout (the newest recorded one, valid first) and its sim twin
 * (recorded, same layout; the same seed preferred, then the newest).
 */
export function pickReplayPair(
  rollouts: readonly RolloutRecord[],
  layout: number,
): { real: RolloutRecord | undefined; sim: RolloutRecord | undefined } {
  const recorded = rollouts.filter((r) => r.layoutIndex === layout && r.episodeFile);
  const newestFirst = (a: RolloutRecord, b: RolloutRecord): number => b.id - a.id;
  const reals = recorded.filter((r) => r.kind === 'real').sort(newestFirst);
  const real = reals.find((r) => r.status === 'valid') ?? reals[0];
  const sims = recorded.filter((r) => r.kind === 'sim').sort(newestFirst);
  const sim =
    (real && sims.find((s) => s.seed === real.seed && s.status === 'valid')) ??
    sims.find((s) => s.status === 'valid') ??
    sims[0];
  return { real, sim };
}

export async function readTrace(r: RolloutRecord): Promise<JointTrace> {
  return traceOf(r, await readEpisodeStreams(r.episodeFile!));
}
