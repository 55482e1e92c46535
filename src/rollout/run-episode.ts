/**
 * The one rollout loop, for the real rig and the sim alike: only the Rig, the cameras, the
 * clock and the end-state source differ, and nothing here asks which one it has.
 *
 * Every control cycle (fixed rate, timed by the clock): read the rig; stop on a rig fault; ask the
 * chunk executor for this step's action (it builds an observation only when it needs one, and
 * images only if the policy lists cameras); write it through the rig's safety supervisor; tick
 * the rig; record the step. At the end the rig holds, the world settles, and the end state is
 * scored through the task's own rule.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { STATE_DIM, type Clock, type Rig, type RigState, type SafetyEvent } from '../rig/contract.js';
import { PolicyUnavailableError, type CameraName, type ChunkExecutor, type EpisodeContext, type Observation, type PolicyInfo, type PrivilegedState, type RgbImage } from '../policy/contract.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import type { EndStateSource, Episode, EpisodeStatus, Trajectory } from './episode.js';

/** Images for the listed cameras, all from the same instant. */
export interface CameraSource {
  capture(cameras: readonly CameraName[]): Promise<Partial<Record<CameraName, RgbImage>>>;
}

export interface RunEpisodeOptions {
  readonly rig: Rig;
  readonly executor: ChunkExecutor;
  /** The policy behind the executor: its cameras, whether it reads privileged state, its identity. */
  readonly policy: PolicyInfo;
  readonly cameras?: CameraSource;
  /** Object poses for privileged (code) policies; only sims can offer it. */
  readonly privileged?: () => PrivilegedState;
  readonly clock: Clock;
  readonly layout: Layout;
  readonly task: TaskDefinition;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  readonly seed: number;
  /** Where the end state comes from; without one the episode is recorded but not scored. */
  readonly endState?: EndStateSource;
  /** Holding time after the last step before the end state is taken, so things come to rest. Default 0.5 s. */
  readonly settleSeconds?: number;
  /** Stops the episode (aborted: stopped by the operator) after the current step. */
  readonly signal?: AbortSignal;
}

/** A rollout could not start: the rig refused to activate, or the policy refused the episode. */
/** The cameras could not give an observation its images. */
class CameraFailure extends Error {}

function startFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function runEpisode(opts: RunEpisodeOptions): Promise<Episode> {
  const { rig, executor, policy, clock, layout, task, controlHz, seed } = opts;
  if (!(controlHz > 0 && controlHz <= 1000)) throw new RangeError(`controlHz must be in (0, 1000], not ${controlHz}`);
  if (!(opts.episodeSeconds > 0)) throw new RangeError(`episodeSeconds must be positive, not ${opts.episodeSeconds}`);
  const periodS = 1 / controlHz;
  const totalSteps = Math.round(opts.episodeSeconds * controlHz);
  const trajectory: Trajectory = {
    steps: 0,
    timeS: new Float64Array(totalSteps),
    position: new Float32Array(totalSteps * STATE_DIM),
    command: new Float32Array(totalSteps * STATE_DIM),
    applied: new Float32Array(totalSteps * STATE_DIM),
    chunkIndex: new Int32Array(totalSteps),
    row: new Int32Array(totalSteps),
  };
  const safetyEvents: SafetyEvent[] = [];
  let status: EpisodeStatus = 'valid';
  let reason: string | undefined;
  let error: string | undefined;
  let observations = 0;
  let steps = 0;
  const ctx: EpisodeContext = { seed, prompt: task.prompt, rigModel: rig.model, controlHz };
  const wantsImages = policy.cameras.length > 0;
  if (wantsImages && !opts.cameras) throw new Error(`Policy '${policy.name}' needs cameras (${policy.cameras.join(', ')}), but this rollout has none.`);
  if (policy.needsPrivilegedState && !opts.privileged) throw new Error(`Policy '${policy.name}' reads privileged object poses, which only the sim provides.`);

  const drainEvents = (): void => {
    for (const e of rig.takeSafetyEvents()) safetyEvents.push(e);
  };
  // On a clock whose time passes by itself (the real rig's wall clock), keep ticking the rig every
  // control period while the policy is awaited (reset, inference at a chunk boundary): its watchdog
  // holds the arm and its motors keep being driven and heard instead of reported silent. A stepped
  // (sim) clock stands still while it waits, so there is nothing to tick and no latency dependence.
  const waitTicking = async <T>(pending: Promise<T>): Promise<T> => {
    if (!clock.passesWhileAwaiting) return pending;
    const timer = setInterval(() => {
      rig.tick();
      drainEvents();
    }, 1000 / controlHz);
    try {
      return await pending;
    } finally {
      clearInterval(timer);
    }
  };
  const faultReason = (state: RigState): string | undefined => (state.faults.length > 0 ? state.faults.map((f) => f.message).join(' ') : undefined);

  try {
    if (rig.read().mode === 'unconfigured') await rig.configure();
    if (rig.read().mode !== 'active') await rig.activate();
  } catch (e) {
    drainEvents();
    return finish('invalid', `The rig could not start the episode: ${startFailure(e)}`);
  }
  const startS = clock.nowS();
  try {
    await waitTicking(executor.reset(ctx));
  } catch (e) {
    rig.hold();
    rig.tick();
    drainEvents();
    if (e instanceof PolicyUnavailableError) return finish('aborted', `policy ${e.reason}: ${e.message}`);
    return finish('invalid', `The policy could not start the episode: ${startFailure(e)}`);
  }

  let state: RigState = rig.read();
  const observe = async (): Promise<Observation> => {
    observations += 1;
    let images = {};
    if (wantsImages) {
      try {
        images = await opts.cameras!.capture(policy.cameras);
      } catch (e) {
        throw new CameraFailure(e instanceof Error ? e.message : String(e));
      }
    }
    return {
      timeS: state.timeS - startS,
      state: Float32Array.from(state.position),
      images,
      prompt: task.prompt,
      privileged: policy.needsPrivilegedState ? opts.privileged!() : undefined,
    };
  };

  const command = new Float64Array(STATE_DIM);
  const cmd = { position: command };
  for (let step = 0; step < totalSteps; step++) {
    const tS = step * periodS;
    await clock.waitUntil(startS + tS);
    state = rig.read();
    const fault = faultReason(state);
    if (fault !== undefined) {
      status = 'invalid';
      reason = fault;
      break;
    }
    if (opts.signal?.aborted) {
      status = 'aborted';
      reason = 'stopped by the operator';
      break;
    }
    let action;
    try {
      action = await waitTicking(executor.step(step, tS, observe));
    } catch (e) {
      if (e instanceof PolicyUnavailableError) {
        status = 'aborted';
        reason = `policy ${e.reason}: ${e.message}`;
      } else if (e instanceof CameraFailure) {
        // Not the policy's doing: without its images the episode says nothing about the policy.
        status = 'invalid';
        reason = `The cameras failed, so the policy got no images: ${e.message}`;
      } else {
        error = e instanceof Error ? e.message : String(e);
      }
      break;
    }
    for (let k = 0; k < STATE_DIM; k++) command[k] = action.position[k];
    const applied = rig.write(cmd);
    rig.tick();
    const o = step * STATE_DIM;
    trajectory.timeS[step] = tS;
    for (let k = 0; k < STATE_DIM; k++) {
      trajectory.position[o + k] = state.position[k];
      trajectory.command[o + k] = command[k];
      trajectory.applied[o + k] = applied.position[k];
    }
    trajectory.chunkIndex[step] = action.chunkIndex;
    trajectory.row[step] = action.row;
    steps = step + 1;
    drainEvents();
  }

  // Safe hold, then let the world come to rest before the end state is taken.
  rig.hold();
  rig.tick();
  const settleS = opts.settleSeconds ?? 0.5;
  const endS = clock.nowS();
  for (let t = periodS; t <= settleS + 1e-9; t += periodS) {
    await clock.waitUntil(endS + t);
    rig.tick();
  }
  drainEvents();
  state = rig.read();
  if (status === 'valid') {
    const fault = faultReason(state);
    if (fault !== undefined) {
      status = 'invalid';
      reason = fault;
    }
  }
  return finish(status, reason);

  async function finish(finalStatus: EpisodeStatus, finalReason: string | undefined): Promise<Episode> {
    const traj: Trajectory = { ...trajectory, steps };
    let progress;
    let endStates;
    let outStatus = finalStatus;
    let outReason = finalReason;
    if (outStatus === 'valid' && opts.endState) {
      try {
        endStates = await opts.endState.endStates();
        progress = task.scoreProgress(layout, endStates);
      } catch (e) {
        outStatus = 'invalid';
        outReason = `The end state could not be scored: ${e instanceof Error ? e.message : String(e)}`;
        progress = undefined;
      }
    }
    const finalState = rig.read();
    const hash = sha256.create();
    hash.update(new Uint8Array(traj.timeS.buffer, 0, steps * 8));
    for (const arr of [traj.position, traj.command, traj.applied]) hash.update(new Uint8Array(arr.buffer, 0, steps * STATE_DIM * 4));
    hash.update(new Uint8Array(traj.chunkIndex.buffer, 0, steps * 4));
    hash.update(new Uint8Array(traj.row.buffer, 0, steps * 4));
    hash.update(new Uint8Array(Float64Array.from(finalState.position).buffer));
    if (opts.endState?.fingerprint) hash.update(new Uint8Array(opts.endState.fingerprint().buffer));
    return {
      status: outStatus,
      reason: outReason,
      error,
      taskId: task.id,
      layoutIndex: layout.index,
      tier: layout.tier,
      seed,
      controlHz,
      episodeSeconds: opts.episodeSeconds,
      policyName: policy.name,
      policyCheckpointSha256: policy.checkpointSha256,
      progress: outStatus === 'valid' ? progress : undefined,
      endStates: outStatus === 'valid' ? endStates : undefined,
      trajectory: traj,
      safetyEvents,
      observations,
      finalStateHash: bytesToHex(hash.digest()),
    };
  }
}
