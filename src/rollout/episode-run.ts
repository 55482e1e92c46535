/**
 * What the one rollout loop (run-episode.ts) takes — the rig, the policy's executor, cameras,
 * clock, layout, recording and task-event hooks — and the state one episode's phases share.
 */
import type { Clock, Rig, RigCommand, RigState, SafetyEvent } from '../rig/contract.js';
import type {
  CameraName,
  ChunkExecutor,
  EpisodeContext,
  PolicyInfo,
  PrivilegedState,
  RgbImage,
} from '../policy/contract.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import type { TaskEvent } from '../tasks/task-events.js';
import type { EndStateSource, EpisodeOutcome, Trajectory } from './episode.js';
import type { OperatorTakeover, TakeoverSpan } from './operator-takeover.js';

/** A camera frame an observation used: how old it was when the observation took it, and the camera's drops so far. */
export interface ObservedFrame {
  readonly camera: string;
  readonly ageS: number;
  readonly dropped: number;
}

/** Images for the listed cameras, all from the same instant. */
export interface CameraSource {
  capture(cameras: readonly CameraName[]): Promise<Partial<Record<CameraName, RgbImage>>>;
  /** The frames the last capture used (streaming cameras); absent where images are drawn on demand (the sim's renderer). */
  lastCapture?(): readonly ObservedFrame[];
}

/** What one control step's action was built from, for the episode file's step timing. */
export interface StepTiming {
  readonly step: number;
  readonly chunkIndex: number;
  /** From the observation's state read to this step's command write: how stale the action's input is. */
  readonly observationToActionS: number;
  /** The camera frames that observation used. */
  readonly frames: readonly ObservedFrame[];
}

/**
 * Where an episode is recorded as it happens (src/record's EpisodeRecorder is one). Every call is
 * synchronous and must not block: the recorder queues, the loop never waits for a disk.
 */
export interface EpisodeRecording {
  /** A measured state: every control step, and every tick while the rig settles. */
  jointState(state: RigState): void;
  /** The command as the rig applied it after safety clamping. */
  command(timeS: number, applied: RigCommand): void;
  safetyEvent(event: SafetyEvent): void;
  /** A phase boundary, a policy chunk taking over, or a per-object task event, with its structured detail. */
  event(timeS: number, kind: LoopEventKind, source: string, message: string, detail?: Record<string, unknown>): void;
  /** Every control step: how old the action's observation and its camera frames were when the command went out. */
  stepTiming(timeS: number, timing: StepTiming): void;
}

/** The events the loop itself records (src/record's EVENT_KINDS has these and more). */
export type LoopEventKind = 'phase' | 'chunk' | 'task' | 'takeover';

/**
 * Watches the objects while the episode runs and says what happened to them in the task's terms
 * (src/tasks/task-events.ts): the sim's scene, or the emulated cell's table. A rig without one
 * (hardware, until an overhead tracker exists) simply has no task events.
 */
export interface TaskEventSource {
  /** Events since the last call, at episode time timeS (seconds from step 0). Synchronous and cheap. */
  sample(timeS: number): readonly TaskEvent[];
}

/** Task events are sampled at about this rate, whatever the control rate: a sample costs ~1–2 ms of scene queries (≈2% of a sim rollout at 10 Hz), and a grasp or a knock lasts longer than 0.1 s. */
export const TASK_EVENT_HZ = 10;

/**
 * The policy rate of an episode, on the rig and in the sim alike, unless asked otherwise
 * (ALOHA-style policies run at 50 Hz). Paired sim and real rollouts then run at the same rate.
 */
export const EPISODE_CONTROL_HZ = 50;

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
  /** Records the episode as it runs (joint states, applied commands, safety events, phases, chunks, task events). */
  readonly recording?: EpisodeRecording;
  /** Per-object task events, sampled at TASK_EVENT_HZ through the steps and the settle. */
  readonly taskEvents?: TaskEventSource;
  /** The operator's takeover with a leader arm (operator-takeover.ts): asked every step, before the policy. */
  readonly takeover?: OperatorTakeover;
  /** After a give-back the policy's commands are blended in from the operator's last pose over this long. Default DEFAULT_HAND_BACK_S. */
  readonly handBackSeconds?: number;
}

/** How a phase ended the episode: the outcome, and the sentence that goes with it. */
export interface EpisodeEnding {
  readonly outcome: EpisodeOutcome;
  /** Why it is invalid or aborted, in an operator's words. */
  readonly reason?: string;
  /** The policy's own error (outcome 'policy-error'). */
  readonly policyError?: string;
}

/** One episode in progress: what its phases share. Made by prepareEpisode. */
export interface EpisodeRun {
  readonly opts: RunEpisodeOptions;
  readonly periodS: number;
  readonly totalSteps: number;
  readonly trajectory: Trajectory;
  readonly safetyEvents: SafetyEvent[];
  readonly ctx: EpisodeContext;
  /** Clock time of step 0 (set by the start phase). */
  startS: number;
  /** Steps recorded so far. */
  steps: number;
  /** Observations built for the policy so far. */
  observations: number;
  /** The rig state the latest step read (what an observation shows). */
  state: RigState | undefined;
  /** Per observation (= per chunk, in order): the clock time of its state and the camera frames it used. */
  readonly observed: { readonly stateTimeS: number; readonly frames: readonly ObservedFrame[] }[];
  /** Task events so far (empty without a TaskEventSource). */
  readonly taskEvents: TaskEvent[];
  /** Sample task events every this many control periods. */
  readonly taskEventEvery: number;
  /** The stretches the operator drove (empty without a takeover input). */
  readonly takeovers: TakeoverSpan[];
  /** The step the operator took over at while the operator drives; -1 while the policy does. */
  operatorFrom: number;
}
