/**
 * The Teleop view: recording takes with a leader arm. Pure (no Node built-ins): the server and the
 * operator UI share it; src/server/api-types.ts gathers every feature.
 */

/** The leaders the Teleop page offers (only those this rig may be driven by), and the cameras a take records. */
export interface TeleopChoices {
  readonly leaders: readonly { readonly value: TeleopLeaderName; readonly words: string }[];
  /** The station config's cameras in words when it names any (every take records those; the page's choice does not apply), else null. */
  readonly cameras: string | null;
  /** The rig builds its own table (the emulated cell): a take without a layout records the cell's default table, not nothing. */
  readonly ownTable: boolean;
}

/** 'station': the station config's own leader (a real YAM or GELLO on its ports); the emulated ones move by a script, for emulated rigs only. */
export const TELEOP_LEADERS = ['station', 'emulated-yam', 'emulated-gello'] as const;

export type TeleopLeaderName = (typeof TELEOP_LEADERS)[number];

/** Starts `tandem teleop record` on the station's rig: the same take loop, its controls from the UI. */
export interface StartTeleopRequest {
  /** A task id (its prompt is recorded) or a free-text prompt. */
  readonly task: string;
  readonly episodes: number;
  readonly seconds: number;
  /** The reset period between takes; default 10 s. */
  readonly resetSeconds?: number;
  /** none | cell | testsrc:N */
  readonly cameras: string;
  /** The leader: the station config's ('station'; its ports are set there) or an emulated one on an emulated rig. */
  readonly leader: TeleopLeaderName;
  /** A stored layout set (SHA-256) and index to put on the emulated cell's table, recorded with every take; both or neither (neither: the cell's default table). */
  readonly layoutSet?: string;
  readonly layout?: number;
}

/** Carries on a stopped teleop recording at its next episode, as 'tandem teleop record --resume'. */
export interface ResumeTeleopRequest {
  /** The stopped session (the one GET /api/teleop/resumable names: a stale page cannot resume another). */
  readonly sessionId: number;
  /** More episodes than the session planned (default: its own count). */
  readonly episodes?: number;
}

/** The teleop session 'tandem teleop record --resume' would carry on in the station's teleop folder. */
export interface TeleopResumable {
  readonly sessionId: number;
  readonly task: string;
  readonly prompt: string;
  readonly kept: number;
  readonly episodes: number;
  readonly seconds: number;
  readonly resetSeconds: number;
  readonly leader: string;
  readonly cameras: string;
  readonly layoutSet: string | null;
  readonly layout: number | null;
  readonly startedAt: string;
  /** Why the station cannot carry it on from the page (e.g. a leader it does not drive), or null. */
  readonly blocked: string | null;
}

/** The operator's buttons, as the keyboard and pedal of `tandem teleop record` send them. */
export type TeleopControlName = 'next' | 'discard' | 'sync' | 'quit';

export const TELEOP_CONTROLS: readonly TeleopControlName[] = ['next', 'discard', 'sync', 'quit'];

export interface TeleopTakeView {
  readonly id: number;
  readonly episodeIndex: number;
  readonly state: 'recording' | 'kept' | 'discarded';
  readonly file: string;
  readonly marks: readonly string[];
  readonly discardReason: string | null;
  /** Frames the cameras dropped during the take (null: no cameras, or not known in this run). */
  readonly droppedFrames: number | null;
  readonly framesReceived: number | null;
  readonly startedAt: string;
}

export type TeleopPhaseName = 'starting' | 'engaging' | 'take' | 'reset' | 'stopped' | 'done' | 'failed';

export interface TeleopView {
  readonly seq: number;
  readonly sessionId: number | null;
  readonly phase: TeleopPhaseName;
  readonly episodeIndex: number;
  readonly episodes: number;
  readonly seconds: number;
  readonly task: string;
  /** When the current take or reset started (station wall time) and how long it lasts. */
  readonly phaseStartedAt: string | null;
  readonly phaseSeconds: number | null;
  readonly kept: number;
  readonly takes: readonly TeleopTakeView[];
  readonly lines: readonly string[];
  readonly problem: string | null;
  readonly cameras: string;
  readonly leader: string;
  /** The stored layout on the table (null: the cell's default table). */
  readonly layoutSet: string | null;
  readonly layout: number | null;
  /** This run carries on a stopped session. */
  readonly resumed: boolean;
}

export type TeleopEvent = { readonly type: 'teleop'; readonly teleop: TeleopView | null };
