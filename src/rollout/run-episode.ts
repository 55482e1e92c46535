/**
 * The one rollout loop, for the real rig and the sim alike: only the Rig, the cameras, the
 * clock and the end-state source differ, and nothing here asks which one it has.
 *
 * An episode runs in four named phases, each its own function so recording and task-event hooks
 * have a place to go:
 * - start:  configure and activate the rig, reset the policy (through its chunk executor);
 * - step:   every control cycle (fixed rate, timed by the clock) read the rig, stop on a rig
 *           fault, an operator stop or a safety stop (the supervisor e-stopped: an open interlock), ask the executor for this step's action (it builds an
 *           observation only when it needs one, and images only if the policy lists cameras),
 *           check the action is 14 finite numbers, write it through the rig's safety supervisor,
 *           tick the rig, record the step;
 * - settle: the rig holds while the world comes to rest; a fault now spoils the end state;
 * - score:  take the end state and score it through the task's own rule, hash the run.
 * Each phase that ends the episode early says why with an outcome (EPISODE_OUTCOMES).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { STATE_DIM, type RigState } from '../rig/contract.js';
import { PolicyUnavailableError, type Observation, type StepAction } from '../policy/contract.js';
import { describeTaskEvent, type TaskEvent } from '../tasks/task-events.js';
import { EPISODE_OUTCOMES, type Episode, type Trajectory } from './episode.js';
import { DEFAULT_HAND_BACK_S, minimumJerk, type OperatorTakeover } from './operator-takeover.js';
import {
  TASK_EVENT_HZ,
  type EpisodeEnding,
  type EpisodeRun,
  type ObservedFrame,
  type RunEpisodeOptions,
} from './episode-run.js';
// What callers pass in and get back is spelled in episode-run.ts; they import it from the loop.
export {
  EPISODE_CONTROL_HZ,
  TASK_EVENT_HZ,
  type CameraSource,
  type EpisodeEnding,
  type EpisodeRecording,
  type EpisodeRun,
  type LoopEventKind,
  type ObservedFrame,
  type RunEpisodeOptions,
  type StepTiming,
  type TaskEventSource,
} from './episode-run.js';

const COMPLETED: EpisodeEnding = { outcome: 'completed' };

/** The cameras could not give an observation its images. */
class CameraFailure extends Error {}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Checks the options and allocates the trajectory: no I/O, nothing moves. */
export function prepareEpisode(opts: RunEpisodeOptions): EpisodeRun {
  const { rig, policy, controlHz, task, seed } = opts;
  if (!(controlHz > 0 && controlHz <= 1000)) throw new RangeError(`controlHz must be in (0, 1000], not ${controlHz}`);
  if (!(opts.episodeSeconds > 0)) throw new RangeError(`episodeSeconds must be positive, not ${opts.episodeSeconds}`);
  if (policy.cameras.length > 0 && !opts.cameras)
    throw new Error(`Policy '${policy.name}' needs cameras (${policy.cameras.join(', ')}), but this rollout has none.`);
  if (policy.needsPrivilegedState && !opts.privileged)
    throw new Error(`Policy '${policy.name}' reads privileged object poses, which only the sim provides.`);
  const totalSteps = Math.round(opts.episodeSeconds * controlHz);
  return {
    opts,
    periodS: 1 / controlHz,
    totalSteps,
    trajectory: {
      steps: 0,
      timeS: new Float64Array(totalSteps),
      position: new Float32Array(totalSteps * STATE_DIM),
      command: new Float32Array(totalSteps * STATE_DIM),
      applied: new Float32Array(totalSteps * STATE_DIM),
      chunkIndex: new Int32Array(totalSteps),
      row: new Int32Array(totalSteps),
    },
    safetyEvents: [],
    ctx: { seed, prompt: task.prompt, rigModel: rig.model, controlHz },
    startS: 0,
    steps: 0,
    observations: 0,
    state: undefined,
    observed: [],
    taskEvents: [],
    taskEventEvery: Math.max(1, Math.round(controlHz / TASK_EVENT_HZ)),
    takeovers: [],
    operatorFrom: -1,
  };
}

/** Samples the task-event source (if any) at episode time tS and records what it saw. */
function sampleTaskEvents(run: EpisodeRun, tS: number, clockS: number): void {
  const source = run.opts.taskEvents;
  if (!source) return;
  for (const e of source.sample(tS)) {
    run.taskEvents.push(e);
    run.opts.recording?.event(clockS, 'task', 'table', describeTaskEvent(e), taskEventDetail(e));
  }
}

function taskEventDetail(e: TaskEvent): Record<string, unknown> {
  const d: Record<string, unknown> = { task_event: e.kind, episode_time_s: e.timeS };
  if (e.objectId !== undefined) d.object = e.objectId;
  if (e.region !== undefined) d.region = e.region;
  if (e.arm !== undefined) d.arm = e.arm;
  if (e.done !== undefined) Object.assign(d, { done: e.done, total: e.total, delta: e.delta });
  return d;
}

function drainEvents(run: EpisodeRun): void {
  const recording = run.opts.recording;
  for (const e of run.opts.rig.takeSafetyEvents()) {
    run.safetyEvents.push(e);
    recording?.safetyEvent(e);
  }
}

/**
 * On a clock whose time passes by itself (the real rig's wall clock), keep ticking the rig every
 * control period while the policy is awaited (reset, inference at a chunk boundary): its watchdog
 * holds the arm and its motors keep being driven and heard instead of reported silent. A stepped
 * (sim) clock stands still while it waits, so there is nothing to tick and no latency dependence.
 */
async function waitTicking<T>(run: EpisodeRun, pending: Promise<T>): Promise<T> {
  const { rig, clock, controlHz } = run.opts;
  if (!clock.passesWhileAwaiting) return pending;
  const timer = setInterval(() => {
    rig.tick();
    drainEvents(run);
  }, 1000 / controlHz);
  try {
    return await pending;
  } finally {
    clearInterval(timer);
  }
}

function faultReason(state: RigState): string | undefined {
  return state.faults.length > 0 ? state.faults.map((f) => f.message).join(' ') : undefined;
}

/**
 * The supervisor stopped the arms (an open interlock, an e-stop): the episode ends there, with the
 * supervisor's own sentence. Whatever the rig, this is its mode saying so — no branch on the rig.
 */
function safetyStop(run: EpisodeRun, step: number): EpisodeEnding {
  drainEvents(run);
  let why: string | undefined;
  for (let i = run.safetyEvents.length - 1; i >= 0 && why === undefined; i--) {
    const e = run.safetyEvents[i];
    if (e.kind === 'interlock-stop' || e.kind === 'estop') why = e.message;
  }
  return {
    outcome: 'safety-stop',
    reason: `${why ?? 'The safety supervisor stopped the arms.'} (at step ${step} of ${run.totalSteps})`,
  };
}

function unavailable(e: PolicyUnavailableError): EpisodeEnding {
  return { outcome: 'policy-unavailable', reason: `policy ${e.reason}: ${e.message}` };
}

/** Start phase: bring the rig up and reset the policy. Returns an ending when the episode cannot start. */
export async function startEpisode(run: EpisodeRun): Promise<EpisodeEnding | undefined> {
  const { rig, executor, clock } = run.opts;
  try {
    if (rig.read().mode === 'unconfigured') await rig.configure();
    if (rig.read().mode !== 'active') await rig.activate();
  } catch (e) {
    drainEvents(run);
    return { outcome: 'rig-refused', reason: `The rig could not start the episode: ${messageOf(e)}` };
  }
  run.startS = clock.nowS();
  run.opts.recording?.event(
    run.startS,
    'phase',
    'rollout',
    'The episode started: the rig is active and the policy is being reset.',
    { phase: 'start' },
  );
  try {
    await waitTicking(run, executor.reset(run.ctx));
  } catch (e) {
    rig.hold();
    rig.tick();
    drainEvents(run);
    if (e instanceof PolicyUnavailableError) return unavailable(e);
    return { outcome: 'policy-reset-failed', reason: `The policy could not start the episode: ${messageOf(e)}` };
  }
  return undefined;
}

/** An observation of the latest state, with images from the cameras when the policy lists any. */
async function observe(run: EpisodeRun): Promise<Observation> {
  const { policy, cameras, task, privileged } = run.opts;
  const state = run.state!;
  run.observations += 1;
  let images = {};
  let frames: readonly ObservedFrame[] = [];
  if (policy.cameras.length > 0) {
    try {
      images = await cameras!.capture(policy.cameras);
    } catch (e) {
      throw new CameraFailure(messageOf(e));
    }
    frames = cameras!.lastCapture?.() ?? [];
  }
  run.observed.push({ stateTimeS: state.timeS, frames });
  return {
    timeS: state.timeS - run.startS,
    state: Float32Array.from(state.position),
    images,
    prompt: task.prompt,
    privileged: policy.needsPrivilegedState ? privileged!() : undefined,
  };
}

/**
 * The action must be 14 finite target positions, whichever executor produced it: anything else is
 * the policy's own error, and no entry of it reaches the rig.
 */
function actionProblem(action: StepAction, policyName: string): string | undefined {
  const p = action.position;
  if (p.length !== STATE_DIM)
    return `Policy ${policyName} gave ${p.length} action values for a step; a step needs ${STATE_DIM} (2 arms × 6 joints + gripper).`;
  for (let k = 0; k < STATE_DIM; k++) {
    if (!Number.isFinite(p[k]))
      return `Policy ${policyName} answered ${String(p[k])} at action entry ${k} (chunk ${action.chunkIndex}, row ${action.row}); no entry of it was executed.`;
  }
  return undefined;
}

function classifyStepFailure(e: unknown, step: number, totalSteps: number, tS: number): EpisodeEnding {
  if (e instanceof PolicyUnavailableError) return unavailable(e);
  // Not the policy's doing: without its images the episode says nothing about the policy.
  if (e instanceof CameraFailure)
    return {
      outcome: 'cameras-failed',
      reason: `The cameras failed at ${tS.toFixed(2)} s into the episode (step ${step} of ${totalSteps}), so the policy got no images: ${e.message}`,
    };
  return { outcome: 'policy-error', policyError: policyErrorAt(messageOf(e), step, totalSteps) };
}

function policyErrorAt(message: string, step: number, totalSteps: number): string {
  return `${message} (at step ${step} of ${totalSteps}; the rig held from there)`;
}

/** Step phase: the control loop. Returns how it ended: completed, or the first reason to stop. */
export async function stepEpisode(run: EpisodeRun): Promise<EpisodeEnding> {
  try {
    return await stepLoop(run);
  } finally {
    // However the steps ended, a stretch the operator was still driving ends with them.
    if (run.operatorFrom >= 0) endTakeover(run, run.steps, true);
  }
}

async function stepLoop(run: EpisodeRun): Promise<EpisodeEnding> {
  const { rig, executor, clock, policy, signal } = run.opts;
  const { trajectory, periodS, totalSteps } = run;
  const command = new Float64Array(STATE_DIM);
  const cmd = { position: command };
  const observeLatest = (): Promise<Observation> => observe(run);
  const recording = run.opts.recording;
  const takeover = run.opts.takeover;
  const handBackSteps = Math.max(1, Math.round((run.opts.handBackSeconds ?? DEFAULT_HAND_BACK_S) / periodS));
  /** Where a give-back's blend starts (-1: none in progress). */
  let handBackAt = -1;
  const handBackFrom = new Float64Array(STATE_DIM);
  const lastApplied = new Float64Array(STATE_DIM);
  const operatorAction = { position: new Float32Array(STATE_DIM) };
  let lastChunk = -1;
  for (let step = 0; step < totalSteps; step++) {
    const tS = step * periodS;
    await clock.waitUntil(run.startS + tS);
    const state = rig.read();
    run.state = state;
    const fault = faultReason(state);
    if (fault !== undefined) return { outcome: 'rig-fault', reason: fault };
    if (signal?.aborted) return { outcome: 'operator-stop', reason: 'stopped by the operator' };
    // Stopped between steps (a tick while the policy thought): no command of this step is sent.
    if (state.mode === 'estopped') return safetyStop(run, step);
    if (step === 0) lastApplied.set(state.position);
    const operator = takeover?.command(state, clock.nowS(), lastApplied);
    if (takeover) recordTakeoverNotes(run, takeover);
    let action: StepAction;
    if (operator !== undefined) {
      if (run.operatorFrom < 0) {
        run.operatorFrom = step;
        recording?.event(
          state.timeS,
          'takeover',
          'operator',
          `The operator took over at ${tS.toFixed(2)} s (step ${step}); the policy pauses.`,
          { takeover: 'start', step, episode_time_s: tS },
        );
      }
      // The operator's steps carry no chunk: -1 marks them in the trajectory.
      action = { position: operatorAction.position, chunkIndex: -1, row: -1 };
      operatorAction.position.set(operator.position);
    } else {
      if (run.operatorFrom >= 0) {
        const from = run.operatorFrom;
        endTakeover(run, step, false);
        recording?.event(
          state.timeS,
          'takeover',
          'operator',
          `The operator gave back at ${tS.toFixed(2)} s (step ${step}, after ${((step - from) * periodS).toFixed(2)} s); the policy resumes from here.`,
          { takeover: 'end', step, episode_time_s: tS },
        );
        executor.replanNow();
        handBackAt = step;
        handBackFrom.set(lastApplied);
      }
      try {
        action = await waitTicking(run, executor.step(step, tS, observeLatest));
      } catch (e) {
        return classifyStepFailure(e, step, totalSteps, tS);
      }
      const problem = actionProblem(action, policy.name);
      if (problem !== undefined)
        return { outcome: 'policy-error', policyError: policyErrorAt(problem, step, totalSteps) };
    }
    for (let k = 0; k < STATE_DIM; k++) command[k] = action.position[k];
    if (handBackAt >= 0 && run.operatorFrom < 0) {
      // Given back: the policy's command blends in from where the operator left the arms.
      const u = (step - handBackAt + 1) / handBackSteps;
      if (u >= 1) handBackAt = -1;
      else {
        const a = minimumJerk(u);
        for (let k = 0; k < STATE_DIM; k++) command[k] = handBackFrom[k] + a * (command[k] - handBackFrom[k]);
      }
    }
    const applied = rig.write(cmd);
    for (let k = 0; k < STATE_DIM; k++) lastApplied[k] = applied.position[k];
    rig.tick();
    if (recording) {
      const writtenS = clock.nowS();
      recording.jointState(state);
      recording.command(writtenS, applied);
      const observed = run.observed[action.chunkIndex];
      if (observed)
        recording.stepTiming(writtenS, {
          step,
          chunkIndex: action.chunkIndex,
          observationToActionS: writtenS - observed.stateTimeS,
          frames: observed.frames,
        });
      if (action.chunkIndex !== lastChunk && action.chunkIndex >= 0) {
        lastChunk = action.chunkIndex;
        recording.event(state.timeS, 'chunk', 'policy', `Chunk ${action.chunkIndex} took over at step ${step}.`, {
          chunk_index: action.chunkIndex,
          step,
        });
      }
    }
    const o = step * STATE_DIM;
    trajectory.timeS[step] = tS;
    for (let k = 0; k < STATE_DIM; k++) {
      trajectory.position[o + k] = state.position[k];
      trajectory.command[o + k] = command[k];
      trajectory.applied[o + k] = applied.position[k];
    }
    trajectory.chunkIndex[step] = action.chunkIndex;
    trajectory.row[step] = action.row;
    run.steps = step + 1;
    drainEvents(run);
    if (step % run.taskEventEvery === 0) sampleTaskEvents(run, tS, state.timeS);
    // Stopped by this step's write or tick: the step is kept (its applied command is the hold).
    if (rig.read().mode === 'estopped')
      return signal?.aborted ? { outcome: 'operator-stop', reason: 'stopped by the operator' } : safetyStop(run, step);
  }
  return COMPLETED;
}

/** Closes the operator's stretch at `step` (the first step not theirs). */
function endTakeover(run: EpisodeRun, step: number, open: boolean): void {
  run.takeovers.push({
    startS: run.operatorFrom * run.periodS,
    endS: step * run.periodS,
    steps: step - run.operatorFrom,
    open,
  });
  run.operatorFrom = -1;
}

function recordTakeoverNotes(run: EpisodeRun, takeover: OperatorTakeover): void {
  const notes = takeover.takeNotes();
  const recording = run.opts.recording;
  if (!recording) return;
  for (const n of notes) recording.event(n.timeS, 'takeover', 'operator', n.message, { takeover: n.kind });
}

/**
 * Settle phase: safe hold, then let the world come to rest before the end state is taken. A fault
 * now (a motor, an unstable sim) means the end state cannot be trusted: the episode is invalid,
 * whether the policy completed or failed on its own.
 */
export async function settleEpisode(run: EpisodeRun, ending: EpisodeEnding): Promise<EpisodeEnding> {
  const { rig, clock } = run.opts;
  rig.hold();
  rig.tick();
  const settleS = run.opts.settleSeconds ?? 0.5;
  const endS = clock.nowS();
  const recording = run.opts.recording;
  recording?.event(endS, 'phase', 'rollout', `The rig holds while the world settles (${settleS} s).`, {
    phase: 'settle',
    ending: ending.outcome,
  });
  const stepsS = run.steps * run.periodS;
  let tick = 0;
  for (let t = run.periodS; t <= settleS + 1e-9; t += run.periodS) {
    await clock.waitUntil(endS + t);
    rig.tick();
    const settled = rig.read();
    recording?.jointState(settled);
    if (++tick % run.taskEventEvery === 0) sampleTaskEvents(run, stepsS + t, settled.timeS);
  }
  // The last look: what the end state is scored from.
  sampleTaskEvents(run, stepsS + settleS, clock.nowS());
  drainEvents(run);
  if (EPISODE_OUTCOMES[ending.outcome].status !== 'valid') return ending;
  const fault = faultReason(rig.read());
  if (fault === undefined) return ending;
  const after = ending.outcome === 'policy-error' ? 'after the policy failed' : 'after the last step';
  return {
    ...ending,
    outcome: 'settle-fault',
    reason: `The rig faulted while the world settled ${after}, so the end state cannot be trusted: ${fault}`,
  };
}

/** Score phase: the end state (valid episodes only), the final-state hash, the episode record. */
export async function scoreEpisode(run: EpisodeRun, ending: EpisodeEnding): Promise<Episode> {
  const { rig, task, layout, policy, endState } = run.opts;
  const steps = run.steps;
  const traj: Trajectory = { ...run.trajectory, steps };
  let outcome = ending.outcome;
  let reason = ending.reason;
  let progress;
  let endStates;
  if (EPISODE_OUTCOMES[outcome].status === 'valid' && endState) {
    try {
      endStates = await endState.endStates();
      progress = task.scoreProgress(layout, endStates);
    } catch (e) {
      outcome = 'scoring-failed';
      reason = `The end state could not be scored: ${messageOf(e)}`;
      progress = undefined;
      endStates = undefined;
    }
  }
  const finalState = rig.read();
  const hash = sha256.create();
  hash.update(new Uint8Array(traj.timeS.buffer, 0, steps * 8));
  for (const arr of [traj.position, traj.command, traj.applied])
    hash.update(new Uint8Array(arr.buffer, 0, steps * STATE_DIM * 4));
  hash.update(new Uint8Array(traj.chunkIndex.buffer, 0, steps * 4));
  hash.update(new Uint8Array(traj.row.buffer, 0, steps * 4));
  hash.update(new Uint8Array(Float64Array.from(finalState.position).buffer));
  if (endState?.fingerprint) hash.update(new Uint8Array(endState.fingerprint().buffer));
  const status = EPISODE_OUTCOMES[outcome].status;
  run.opts.recording?.event(run.opts.clock.nowS(), 'phase', 'rollout', reason ?? `The episode ended: ${outcome}.`, {
    phase: 'end',
    outcome,
    status,
    progress: progress ?? null,
    steps,
  });
  return {
    status,
    outcome,
    reason,
    error: ending.policyError,
    taskId: task.id,
    layoutIndex: layout.index,
    tier: layout.tier,
    seed: run.opts.seed,
    controlHz: run.opts.controlHz,
    episodeSeconds: run.opts.episodeSeconds,
    policyName: policy.name,
    policyCheckpointSha256: policy.checkpointSha256,
    progress: status === 'valid' ? progress : undefined,
    endStates: status === 'valid' ? endStates : undefined,
    trajectory: traj,
    safetyEvents: run.safetyEvents,
    taskEvents: run.taskEvents,
    takeovers: run.takeovers,
    observations: run.observations,
    finalStateHash: bytesToHex(hash.digest()),
  };
}

export async function runEpisode(opts: RunEpisodeOptions): Promise<Episode> {
  const run = prepareEpisode(opts);
  const notStarted = await startEpisode(run);
  if (notStarted) return scoreEpisode(run, notStarted);
  const stepped = await stepEpisode(run);
  const settled = await settleEpisode(run, stepped);
  return scoreEpisode(run, settled);
}
