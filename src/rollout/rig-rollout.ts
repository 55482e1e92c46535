/**
 * One rollout on a real (or emulated) rig: the same loop as the sim (runEpisode), on wall time,
 * with a chunk executor that logs every inference. The rig has no privileged end state, so the
 * episode is recorded unscored ("awaiting operator score"); code policies are refused because
 * they read object poses only the sim has — unless the rig offers them (the emulated cell's world,
 * `privileged`). Afterwards the rig holds (inside runEpisode), is
 * deactivated (damped) and closed — also when the policy times out or the operator stops.
 */
import { performance } from 'node:perf_hooks';
import type { Clock, MotorLoopStats, Rig, RigMode, SafetyEventKind } from '../rig/contract.js';
import { RealtimeClock } from '../rig/clocks.js';
import type { Policy, PrivilegedState } from '../policy/contract.js';
import type { ObjectEndState } from '../tasks/types.js';
import { createChunkExecutor, type ChunkRecord } from '../policy/chunk-executor.js';
import { PrivilegedStateRequiredError } from '../policy/code/privileged.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { runEpisode, type CameraSource, type EpisodeRecording, type TaskEventSource } from './run-episode.js';
import type { EndStateSource, Episode } from './episode.js';
import type { OperatorTakeover } from './operator-takeover.js';

export interface RigRolloutOptions {
  readonly rig: Rig;
  readonly policy: Policy;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  readonly seed: number;
  /**
   * Wall-clock deadline per inference; past it the episode is aborted (policy timeout) and the rig
   * holds. Default: policyDeadlineMs(clock).
   */
  readonly deadlineMs?: number;
  readonly signal?: AbortSignal;
  /** Images for policies that list cameras. */
  readonly cameras?: CameraSource;
  /** Default: a fresh RealtimeClock. The rig must read the same clock. */
  readonly clock?: Clock;
  /**
   * Object poses for code policies. Only a rig that is a world of its own (the emulated cell) can
   * offer them; without them code policies are refused, as on hardware.
   */
  readonly privileged?: () => PrivilegedState;
  /**
   * Who looks at the table once the episode has settled, before the rig damps: the emulated cell's
   * scripted operator. The episode itself stays unscored, as every rig rollout; the end states
   * are returned for the caller to enter as an operator score.
   */
  readonly lookAtTable?: EndStateSource;
  /** Per-object task events while it runs (the emulated cell's table); hardware has none yet. */
  readonly taskEvents?: TaskEventSource;
  /** Records the episode as it runs (the station records every rig rollout). */
  readonly recording?: EpisodeRecording;
  /** The operator's takeover with a leader arm (operator-takeover.ts). */
  readonly takeover?: OperatorTakeover;
}

export interface RigRolloutTiming {
  /** Control steps per second of wall time, first step to last. */
  readonly achievedHz: number;
  /** How late each step woke after its deadline (the loop waits for inference at chunk boundaries). */
  readonly wakeLateP50Ms: number;
  readonly wakeLateP99Ms: number;
  readonly wakeLateMaxMs: number;
  /** Steps that started more than half a period late. */
  readonly lateSteps: number;
}

/**
 * The loop that drove the motors during the episode: the rig's own (a rig thread, at the motor
 * rate) where it runs one, else the rollout's steps themselves (measured on their wake-ups).
 */
export interface EpisodeLoopStats extends MotorLoopStats {
  readonly measuredBy: 'rig thread' | 'rollout loop';
}

export interface RigRolloutResult {
  readonly episode: Episode;
  readonly timing: RigRolloutTiming;
  /** For the episode's end metadata and the Rig page. */
  readonly loop: EpisodeLoopStats;
  readonly chunks: readonly ChunkRecord[];
  readonly safetyEventsByKind: Partial<Record<SafetyEventKind, number>>;
  /** The rig's mode after deactivate(): 'damped' unless the driver could not say. */
  readonly finalMode: RigMode;
  /** What lookAtTable saw after the episode (absent without one, or when the episode is not valid). */
  readonly tableEndStates?: readonly ObjectEndState[];
  readonly wallMs: number;
}

/** Records when each wait returned, relative to its deadline: the loop's own timing, measured. */
class MeasuredClock implements Clock {
  readonly wakeS: number[] = [];
  readonly lateS: number[] = [];
  readonly passesWhileAwaiting: boolean | undefined;
  constructor(private readonly inner: Clock) {
    this.passesWhileAwaiting = inner.passesWhileAwaiting;
  }
  nowS(): number {
    return this.inner.nowS();
  }
  async waitUntil(tS: number): Promise<void> {
    await this.inner.waitUntil(tS);
    const now = this.inner.nowS();
    this.wakeS.push(now);
    this.lateS.push(Math.max(0, now - tS));
  }
}

function quantileMs(sortedS: readonly number[], q: number): number {
  if (sortedS.length === 0) return 0;
  return sortedS[Math.min(sortedS.length - 1, Math.floor(q * sortedS.length))] * 1000;
}

/** Throws PrivilegedStateRequiredError (the policy's own sentence) for policies that need sim-only state. */
export function assertRunsOnRig(policy: Policy): void {
  if (policy.info.needsPrivilegedState) throw new PrivilegedStateRequiredError(policy.info.name);
}

/** Below the safety supervisor's 2 s watchdog damp: a stalled policy aborts while the arm still holds. */
export const DEFAULT_DEADLINE_MS = 1500;
/**
 * On a clock that stands still while the policy is awaited (virtual time) no arm waits on the
 * policy and its latency costs the episode nothing: the deadline only tells a hung policy from a
 * slow or busy machine, so it is long — a short one would end rollouts because the machine is busy.
 */
export const STANDSTILL_DEADLINE_MS = 30_000;

/** The per-inference deadline a rollout on this clock gets unless one is given. */
export function policyDeadlineMs(clock: Pick<Clock, 'passesWhileAwaiting'> | undefined, given?: number): number {
  // No clock means the wall clock (runRigRollout's default).
  return (
    given ?? (clock === undefined || clock.passesWhileAwaiting === true ? DEFAULT_DEADLINE_MS : STANDSTILL_DEADLINE_MS)
  );
}

export async function runRigRollout(opts: RigRolloutOptions): Promise<RigRolloutResult> {
  if (!opts.privileged) assertRunsOnRig(opts.policy);
  const { rig, controlHz } = opts;
  const clock = new MeasuredClock(opts.clock ?? new RealtimeClock());
  const executor = createChunkExecutor(opts.policy, { deadlineMs: policyDeadlineMs(opts.clock, opts.deadlineMs) });
  const t0 = performance.now();
  let episode: Episode;
  let tableEndStates: readonly ObjectEndState[] | undefined;
  let motorLoop: MotorLoopStats | undefined;
  try {
    episode = await runEpisode({
      rig,
      executor,
      policy: opts.policy.info,
      cameras: opts.cameras,
      clock,
      layout: opts.layout,
      task: opts.task,
      episodeSeconds: opts.episodeSeconds,
      controlHz,
      seed: opts.seed,
      signal: opts.signal,
      privileged: opts.privileged,
      recording: opts.recording,
      taskEvents: opts.taskEvents,
      takeover: opts.takeover,
    });
    if (episode.status === 'valid' && opts.lookAtTable) tableEndStates = await opts.lookAtTable.endStates();
  } finally {
    // The motors' own loop, measured up to the end of the settle (before it damps).
    motorLoop = await rig.loopStats?.().catch(() => undefined);
    // runEpisode ends in a hold; damp before the transport goes away, whatever happened.
    await rig.deactivate();
  }
  const finalMode = rig.read().mode;
  const wallMs = performance.now() - t0;
  const steps = episode.trajectory.steps;
  // runEpisode waits once per step, then once per settle cycle: the first `steps` waits are the steps.
  const wake = clock.wakeS.slice(0, steps);
  const late = clock.lateS.slice(0, steps).sort((a, b) => a - b);
  const spanS = wake.length > 1 ? wake[wake.length - 1] - wake[0] : 0;
  const timing: RigRolloutTiming = {
    achievedHz: spanS > 0 ? (wake.length - 1) / spanS : 0,
    wakeLateP50Ms: quantileMs(late, 0.5),
    wakeLateP99Ms: quantileMs(late, 0.99),
    wakeLateMaxMs: late.length ? late[late.length - 1] * 1000 : 0,
    lateSteps: late.filter((s) => s > 0.5 / controlHz).length,
  };
  const safetyEventsByKind: Partial<Record<SafetyEventKind, number>> = {};
  for (const e of episode.safetyEvents) safetyEventsByKind[e.kind] = (safetyEventsByKind[e.kind] ?? 0) + 1;
  let longestGapS = 0;
  for (let i = 1; i < wake.length; i++) longestGapS = Math.max(longestGapS, wake[i] - wake[i - 1]);
  const loop: EpisodeLoopStats = motorLoop
    ? { ...pickMotorLoopStats(motorLoop), measuredBy: 'rig thread' }
    : {
        measuredBy: 'rollout loop',
        rateHz: controlHz,
        cycles: steps,
        achievedHz: timing.achievedHz,
        lateCycles: timing.lateSteps,
        overruns: late.filter((s) => s > 1 / controlHz).length,
        jitterP50Ms: timing.wakeLateP50Ms,
        jitterP99Ms: timing.wakeLateP99Ms,
        jitterMaxMs: timing.wakeLateMaxMs,
        watchdogHolds: episode.safetyEvents.filter((e) => e.kind === 'watchdog-hold').length,
        // One command per step: the longest time between two steps' writes.
        longestCommandAgeMs: longestGapS * 1000,
      };
  return {
    episode,
    timing,
    loop,
    chunks: executor.chunks(),
    safetyEventsByKind,
    finalMode,
    wallMs,
    ...(tableEndStates ? { tableEndStates } : {}),
  };
}

/** The MotorLoopStats fields of a richer record (a rig thread's also counts commands and dropped events). */
export function pickMotorLoopStats(s: MotorLoopStats): MotorLoopStats {
  const {
    rateHz,
    cycles,
    achievedHz,
    lateCycles,
    overruns,
    jitterP50Ms,
    jitterP99Ms,
    jitterMaxMs,
    watchdogHolds,
    longestCommandAgeMs,
  } = s;
  return {
    rateHz,
    cycles,
    achievedHz,
    lateCycles,
    overruns,
    jitterP50Ms,
    jitterP99Ms,
    jitterMaxMs,
    watchdogHolds,
    longestCommandAgeMs,
  };
}

/** The end-metadata record of an episode's loop statistics (numbers rounded to what they can say). */
export function loopStatsMetadata(l: EpisodeLoopStats): Record<string, string> {
  const r = (x: number, d: number): number => Number(x.toFixed(d));
  return {
    loop_stats: JSON.stringify({
      measured_by: l.measuredBy,
      rate_hz: l.rateHz,
      cycles: l.cycles,
      achieved_hz: r(l.achievedHz, 2),
      late_cycles: l.lateCycles,
      overruns: l.overruns,
      jitter_ms: { p50: r(l.jitterP50Ms, 3), p99: r(l.jitterP99Ms, 3), max: r(l.jitterMaxMs, 3) },
      watchdog_holds: l.watchdogHolds,
      longest_command_age_ms: r(l.longestCommandAgeMs, 1),
    }),
  };
}
