/**
 * What the session engine calls and the app layer provides: the projector, the cell's interlocks,
 * the rollout on the rig, and the operator (a person at a terminal or in the UI, or the emulated
 * cell's scripted operator). The engine knows none of their implementations.
 */
import type { Layout, ObjectEndState, TaskDefinition } from '../tasks/types.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { RolloutStatus } from '../store/store.js';
import type { SessionProgress, UnscoredKind } from './journal-state.js';
import type { PlacementCheck, PlacementThresholds } from './placement-gate.js';

/** Shows a layout's footprints on the table, and blanks before the arms move. */
export interface SessionProjector {
  /** Says what projects, for the session's log ("no projector configured"). */
  readonly description: string;
  show(layout: Layout, set: LayoutSet): Promise<void>;
  blank(): Promise<void>;
}

/** A station without a projector: the operator places from the layout's printed top view. */
export const NO_PROJECTOR: SessionProjector = {
  description: 'no projector configured',
  show: () => Promise.resolve(),
  blank: () => Promise.resolve(),
};

/**
 * Whether the session may run a rollout now: the cell's e-stop and interlocks (door, light curtain)
 * as the engine sees them — a signal that aborts the running rollout, and a reason not to start one.
 * (The rig's safety supervisor reads the same cell through src/rig's CellInterlock.)
 */
export interface SessionGate {
  /** Aborted when the e-stop is pressed or an interlock opens; a new signal per rollout. */
  armed(): AbortSignal;
  /** Why the cell is not safe to run now, or undefined when it is. */
  blocked(): string | undefined;
}

/**
 * The reason an operator's Abort (S, the card's button) gives the rollout's safety signal: the
 * rollout ends as stopped by the operator, not e-stopped, and the session offers it for redo.
 */
export const OPERATOR_STOP = 'stopped by the operator';

/** No cell I/O configured: nothing stops the session but the operator and Ctrl-C. */
export const NO_GATE: SessionGate = {
  armed: () => new AbortController().signal,
  blocked: () => undefined,
};

export interface SessionRunRequest {
  readonly sessionId: number;
  readonly slot: number;
  readonly attempt: number;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  /** The spec that runs; never shown to the operator in a blind session. */
  readonly spec: string;
  /** What the operator sees ("policy A"). */
  readonly label: string;
  readonly seed: number;
  readonly episodeSeconds: number;
  /** Aborted by the e-stop, an interlock or Ctrl-C: the rig holds, then damps. */
  readonly signal: AbortSignal;
}

export interface SessionRunOutcome {
  /** The stored rollout (linked to the session). */
  readonly rolloutId: number;
  readonly status: RolloutStatus;
  /** Why it does not count (policy timeout, rig fault, stopped by the operator). */
  readonly reason?: string;
  readonly policyError?: string;
  readonly episodeFile?: string;
  /** The rig's mode after the rollout ('damped'). */
  readonly finalMode: string;
  readonly wallS: number;
  /**
   * What the table looks like after the episode, where a rig can see it (the emulated cell):
   * kept in the journal so its scripted operator can score after a station restart, as a
   * person would look at the table that is still there.
   */
  readonly tableEndStates?: readonly ObjectEndState[];
}

/** Runs one rollout on the rig and stores it; throws only when the rig could not run it at all. */
export interface SessionRolloutRunner {
  run(r: SessionRunRequest): Promise<SessionRunOutcome>;
}

/** What the operator is asked about: the slot, the layout and the (blind) label, and where the session is. */
export interface OperatorStep {
  readonly slot: number;
  readonly attempt: number;
  readonly total: number;
  readonly layout: Layout;
  readonly task: TaskDefinition;
  readonly label: string;
  readonly seed: number;
  readonly progress: SessionProgress;
  /** The placement check refused the last placement of this attempt: the object to move and why (the operator places again). */
  readonly placementRefused?: {
    readonly object: string;
    readonly sentence: string;
    readonly objects: readonly { readonly id: string; readonly errorMm: number | null; readonly errorDeg?: number }[];
  };
}

/** Seconds the operator took, when the operator is simulated (else the engine measures them). */
export interface Timed {
  readonly simulatedS?: number;
}

export type PlaceAnswer = (
  | { readonly action: 'confirm' }
  | { readonly action: 'pause' }
  | { readonly action: 'stop' }
  | { readonly action: 'estop' }
) &
  Timed;

export type ScoreAnswer =
  | ({ readonly action: 'score'; readonly endStates: readonly ObjectEndState[]; readonly note?: string } & Timed)
  /** A quick score by count (bottles in the bin, mugs upright): see score-entry.ts. */
  | ({ readonly action: 'score-count'; readonly count: number; readonly note?: string } & Timed)
  | ({ readonly action: 'redo'; readonly reason: string } & Timed);

/** The operator's "this object is done" while the rig runs a rollout (a keypress, a pedal, a button). */
export interface DoneMark {
  /** The object, when the operator named it. */
  readonly objectId?: string;
  /** Episode seconds the operator says it was done at (a simulated operator); else the engine's clock since the rollout started. */
  readonly simulatedTS?: number;
}

export interface SessionOperator {
  /** Who scores (stored with each score). */
  readonly name: string;
  /** The layout is shown: place the objects, then confirm (or pause, stop for now, e-stop). */
  place(step: OperatorStep): Promise<PlaceAnswer>;
  /**
   * The rig runs the rollout: the operator may mark each object as it is done (`mark`), until
   * `signal` aborts when the episode ends. Optional: an operator without it gives no times, and the
   * report counts its rollouts' objects without them.
   */
  watchRun?(step: OperatorStep, mark: (m: DoneMark) => void, signal: AbortSignal): void;
  /** The episode ended: score each object (or ask to redo it, with a reason). */
  score(step: OperatorStep & { readonly run: SessionRunOutcome }): Promise<ScoreAnswer>;
  /** The entry was refused (an impossible score): `problem` says why; the operator is asked again. */
  refused(problem: string): void;
  /** Clear the table for the next layout. */
  reset(step: OperatorStep): Promise<Timed>;
  /** The rollout could not be scored (failed, stopped, cut off by a crash): redo it? */
  offerRedo(step: OperatorStep, why: { readonly kind: UnscoredKind; readonly reason: string }): Promise<boolean>;
  /** A paused session waits here until the operator carries on (true) or stops for now (false). */
  paused(progress: SessionProgress): Promise<boolean>;
  /** Time for a break; returns once the operator carries on. */
  breakReminder(progress: SessionProgress): Promise<Timed>;
  /** Anything the operator should read (progress, what runs). */
  say(line: string): void;
}

/**
 * The placement check before start: the overhead camera's frame against the sim twin's picture of
 * the layout from the same calibrated camera. `check` never throws for a missing or uncalibrated
 * camera: it answers `{checked: false, reason}`, and the rollout runs unchecked.
 */
export interface PlacementGate {
  readonly thresholds: PlacementThresholds;
  check(step: OperatorStep): Promise<PlacementCheck>;
}

/**
 * Recovers the episode files the station was writing when it stopped (a cut-off rollout, found at
 * resume): each one's readable prefix is kept and its store row marked. Returns the files kept.
 */
export interface RecordingRecovery {
  recoverCutOff(): Promise<string[]>;
}
