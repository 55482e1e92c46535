/**
 * The station API's shapes: requests, responses and the event stream, shared by the server
 * (src/server) and the operator UI (station-ui). Pure — no Node built-ins — so the UI bundles it.
 * Everything the UI shows comes through these types; the UI never touches the rig or the store.
 */
import type { ArmSide, FaultKind, RigMode, SafetyEventKind } from '../rig/contract.js';
import type { Layout } from '../tasks/types.js';
import type { TierSummary } from '../analysis/tier-summary.js';
import type { SequentialVerdict } from '../analysis/sequential.js';
import type { AnytimeComparison } from '../analysis/anytime-ab.js';

/**
 * Every API request carries the launch token in this header. The page reads it from the URL's
 * fragment (`#token=…`, never sent to a server) and keeps it in memory — never in a cookie, which
 * any other server on 127.0.0.1 would receive (cookies are not isolated by port).
 */
export const TOKEN_HEADER = 'x-tandem-token';
/** The event stream's WebSocket subprotocol; the server answers with it. */
export const EVENTS_PROTOCOL = 'tandem-events';
/** A browser cannot set headers on a WebSocket: it offers the token as a second subprotocol with this prefix. */
export const TOKEN_PROTOCOL_PREFIX = 'tandem-token.';

/** The launch token in a fragment (`#token=…`, or a view before it: `#rig&token=…`), or undefined. */
export function tokenInFragment(hash: string): string | undefined {
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (part.startsWith('token=') && /^[A-Za-z0-9_-]+$/.test(part.slice(6))) return part.slice(6);
  }
  return undefined;
}
/** The rig types the station knows (src/app/rig-registry.ts), as an operator calls them. */
const RIG_TYPE_WORDS: Readonly<Record<string, string>> = {
  'yam-can': 'YAM arms',
  'yam-cell': 'emulated cell (no hardware)',
  'yam-emulated': 'emulated motors (no hardware)',
  mirror: 'no hardware (commands mirrored)',
};

/**
 * The rig in an operator's words — "emulated cell (no hardware)", not the config's "yam-cell" — for
 * the page and the station's own lines alike; a type it does not know is shown as it is.
 */
export function rigTypeWords(type: string): string {
  return Object.hasOwn(RIG_TYPE_WORDS, type) ? RIG_TYPE_WORDS[type] : type;
}

/** Largest request body the API reads; anything bigger is refused before it is parsed. */
export const MAX_BODY_BYTES = 16 * 1024;
/** The WebSocket path of the event stream. */
export const EVENTS_PATH = '/api/events';
/** How often the stream sends the rig's state. */
export const RIG_STREAM_HZ = 20;

/** Every error response: one sentence an operator can act on. */
export interface ApiError {
  readonly error: string;
  /**
   * When a request mixes what cannot be mixed (the compare report's calibrations or episode
   * lengths), what is stored to pick from: ReportChoices of src/analysis/paired-report.ts.
   */
  readonly choices?: Record<string, unknown>;
}

/** One motor as its driver reports it (rigs without per-motor reports list none). */
export interface MotorStatus {
  /** "left arm joint 3", "right gripper". */
  readonly name: string;
  readonly arm: ArmSide;
  /** 0..5 joints, 6 gripper. */
  readonly index: number;
  readonly canId: number;
  readonly model: string;
  readonly positionRad: number | null;
  readonly velocityRadS: number | null;
  readonly torqueNm: number | null;
  readonly mosfetTempC: number | null;
  readonly rotorTempC: number | null;
  /** The motor's status in words: "enabled", "disabled", "over-current; check for a collision…". */
  readonly status: string;
  readonly fault: boolean;
  /** Seconds since its last report (null: never heard). */
  readonly lastReplyAgeS: number | null;
}

export interface FaultView {
  readonly kind: FaultKind;
  readonly arm?: ArmSide;
  readonly joint?: number;
  readonly message: string;
}

export interface SafetyEventView {
  /** Station wall time, ISO 8601. */
  readonly at: string;
  readonly kind: SafetyEventKind;
  readonly message: string;
}

/** The emulated cell's own numbers, when the rig is one. */
export interface CellStatus {
  readonly task: string;
  readonly tier: number;
  readonly objects: number;
  /** How much of a core its world uses, 0..1. */
  readonly busyFraction: number;
  /** Real time / the world's compute time (Infinity is sent as null: not yet measured). */
  readonly marginX: number | null;
  readonly maxLagMs: number;
  readonly behindEvents: number;
}

/** Who has the rig now: nobody (idle), the operator's hold, or a rollout. */
export type RigUse = 'idle' | 'holding' | 'rollout' | 'changing';

export interface RigStatus {
  /** The config's type, e.g. "yam-cell". */
  readonly type: string;
  readonly mode: RigMode;
  readonly use: RigUse;
  /** Positions, policy order (14). */
  readonly position: readonly number[];
  readonly motors: readonly MotorStatus[];
  readonly faults: readonly FaultView[];
  /** Newest last, bounded. */
  readonly recentEvents: readonly SafetyEventView[];
  readonly cell: CellStatus | null;
  /** The cell PLC's interlocks (e-stop circuit, door, light curtain), or null without cell I/O. */
  readonly interlock: { readonly open: boolean; readonly words: string } | null;
  /** What the rig cannot do now and why, when a command would be refused (e.g. a rollout runs). */
  readonly note: string | null;
  /** The motor loop's statistics, once a loop has run: the rig thread's own, or the station's hold loop. */
  readonly loop: RigLoopView | null;
}

/** What the motor loop measured about itself (since the rig was last activated, or the hold began). */
export interface RigLoopView {
  /** Whose loop: the rig's own thread ('rig thread') or the station's hold loop on its main thread ('hold loop'). */
  readonly measuredBy: 'rig thread' | 'hold loop';
  readonly rateHz: number;
  readonly cycles: number;
  readonly achievedHz: number;
  readonly lateCycles: number;
  readonly overruns: number;
  readonly jitterP50Ms: number;
  readonly jitterP99Ms: number;
  readonly jitterMaxMs: number;
  /** Null where the loop does not count them (the hold loop; its holds are listed as safety events). */
  readonly watchdogHolds: number | null;
  readonly longestCommandAgeMs: number | null;
}

export interface StationInfo {
  readonly rigType: string;
  readonly dataDir: string;
  readonly startedAt: string;
  /** Policy specs the station knows, for the run form's hints. */
  readonly policySpecs: readonly string[];
  /** What the rollout form offers first. */
  readonly defaultPolicy: string;
  /** What the Teleop page can start on this station. */
  readonly teleop: TeleopChoices;
}

/** The leaders the Teleop page offers (only those this rig may be driven by), and the cameras a take records. */
export interface TeleopChoices {
  readonly leaders: readonly { readonly value: TeleopLeaderName; readonly words: string }[];
  /** The station config's cameras in words when it names any (every take records those; the page's choice does not apply), else null. */
  readonly cameras: string | null;
}

export interface LayoutSetSummary {
  readonly sha256: string;
  readonly task: string;
  readonly version: number;
  readonly seed: number;
  readonly layoutCount: number;
  readonly tiers: readonly number[];
  readonly importedAt: string;
  /** The task's own episode length, seconds. */
  readonly episodeSeconds: number;
}

export type RolloutStatusWord = 'valid' | 'invalid' | 'aborted';

export interface RolloutSummary {
  readonly id: number;
  readonly kind: 'sim' | 'real';
  readonly policy: { readonly id: number; readonly name: string; readonly spec: string };
  readonly layoutSetSha256: string;
  readonly task: string | null;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly status: RolloutStatusWord;
  readonly outcome: string | null;
  /** Why it is invalid or aborted. */
  readonly statusReason: string | null;
  readonly policyError: string | null;
  /** Task progress 0..1: the latest operator score, else the rollout's own (sim); null = awaiting a score. */
  readonly progress: number | null;
  /** Who scored it ("scripted operator of the emulated cell", an operator's name), or null. */
  readonly scoredBy: string | null;
  readonly startedAt: string;
  readonly durationS: number | null;
  readonly episodeSeconds: number;
  readonly controlHz: number;
  /** True for rollouts on the emulated cell: a rehearsal, not a result. */
  readonly emulatedCell: boolean;
  /** A rehearsal, not a result (black camera frames, the emulated cell): reports leave it out unless asked. */
  readonly rehearsal: boolean;
  /** The evaluation session it ran in (scored there), or null for a single rollout. */
  readonly sessionId: number | null;
}

/** POST /api/rollouts/ID/score: per-object end states, or a count (objects in the task's region, or upright); a re-score needs a reason. */
export interface RolloutScoreRequest {
  readonly endStates?: readonly { readonly id: string; readonly region?: string; readonly upright?: boolean }[];
  readonly count?: number;
  readonly reason?: string;
  readonly operator?: string;
}

export interface RolloutDetail extends RolloutSummary {
  readonly seed: number | null;
  readonly counts: Readonly<Record<string, number>> | null;
  readonly finalStateHash: string | null;
  readonly calibrationSha256s: readonly string[];
  /** The episode file (MCAP) the rollout was recorded in, if it was. */
  readonly episodeFile: string | null;
  readonly score: {
    readonly progress: number;
    readonly counts: Readonly<Record<string, number>>;
    readonly operator: string | null;
    readonly note: string | null;
    readonly enteredAt: string;
  } | null;
}

// ---- requests ------------------------------------------------------------------------------

export type RigCommandName = 'hold' | 'damp' | 'estop';
export const RIG_COMMANDS: readonly RigCommandName[] = ['hold', 'damp', 'estop'];

export interface RigCommandRequest {
  readonly command: RigCommandName;
}

export interface RunRolloutRequest {
  /** A policy spec, as `tandem rig rollout --policy` takes. */
  readonly policy: string;
  /** The layout set's SHA-256 (it must be in the store). */
  readonly layoutSet: string;
  readonly layout: number;
  /** Episode length; default the task's. */
  readonly seconds?: number;
  readonly seed?: number;
  /** The emulated cell's scripted operator scores the end state (default true on the cell). */
  readonly scoreFromCell?: boolean;
}

/** Draws a layout set as \`tandem layouts sample\` does and keeps it in the store. */
export interface SampleLayoutSetRequest {
  readonly task: string;
  readonly tiers: readonly number[];
  readonly perTier: number;
  readonly seed: number;
}

// ---- a rollout run, as it goes -------------------------------------------------------------

export type RunPhase = 'starting' | 'running' | 'storing' | 'done' | 'failed';

export interface RolloutRun {
  readonly runId: number;
  readonly phase: RunPhase;
  readonly policy: string;
  readonly layoutSet: string;
  readonly layout: number;
  readonly seconds: number;
  /** Control steps done / planned. */
  readonly stepsDone: number;
  readonly totalSteps: number;
  /** What is happening, or why it failed, in words. */
  readonly message: string;
  /** Once stored. */
  readonly rolloutId: number | null;
  readonly status: RolloutStatusWord | null;
  readonly progress: number | null;
  readonly scoreSummary: string | null;
}

// ---- compare: real vs sim for one policy on one layout set ---------------------------------

/**
 * GET /api/compare/report: the paired report's data for a policy list on a layout set — exactly
 * `tandem report --json`'s (PairedReport in src/analysis/paired-report.ts, with otherLayoutSets and
 * operatorTime) — plus whether its real side is the emulated cell. The UI reads it with the
 * PairedReport type from src/analysis; here it stays opaque, as this room imports no analysis.
 */
export interface CompareReportExtras {
  readonly realOnEmulatedCell: boolean;
  /** The tier of every layout of the set, by index (layouts without rollouts too). */
  readonly layoutTiers: readonly number[];
}
export type CompareReport = Record<string, unknown> & CompareReportExtras;

/** A policy and a layout set that have stored rollouts, for the compare view's picker. */
export interface CompareChoice {
  readonly policy: { readonly id: number; readonly name: string; readonly spec: string };
  readonly layoutSet: string;
  readonly task: string | null;
  readonly realRollouts: number;
  readonly simRollouts: number;
}

/** One side (real or sim) of one layout. */
export interface CompareSide {
  /** Every stored rollout of this policy on this layout, on this side. */
  readonly rollouts: number;
  /** The ones that count: valid and scored. */
  readonly counted: number;
  /** Mean task progress over the counted ones; null when none counts. */
  readonly meanProgress: number | null;
  /** Invalid, aborted, or awaiting a score: listed, never averaged. */
  readonly notCounted: number;
}

export interface CompareLayoutRow {
  readonly layout: number;
  readonly tier: number;
  readonly real: CompareSide;
  readonly sim: CompareSide;
  /** Real minus sim mean progress, where both have counted rollouts. */
  readonly gap: number | null;
}

/** One side of one tier (or 'all'): mean over layouts with a 95% layout-bootstrap interval (src/analysis tier-summary). */
export interface CompareTierSide {
  readonly layouts: number;
  readonly rollouts: number;
  readonly meanProgress: number;
  readonly lower: number;
  readonly upper: number;
}

export interface CompareTierRow {
  readonly tier: number | 'all';
  readonly real: CompareTierSide | null;
  readonly sim: CompareTierSide | null;
}

export interface CompareView {
  readonly policy: { readonly id: number; readonly name: string; readonly spec: string };
  readonly layoutSet: { readonly sha256: string; readonly task: string; readonly layoutCount: number };
  /** Every layout of the set, in index order, with or without rollouts. */
  readonly layouts: readonly CompareLayoutRow[];
  readonly tiers: readonly CompareTierRow[];
  /** True when the real side ran on the emulated cell: a rehearsal, not a result. */
  readonly realOnEmulatedCell: boolean;
}

/** A recorded episode's joint states, from its MCAP file (times from its first joint state). */
export interface JointTrace {
  readonly rolloutId: number;
  readonly kind: 'sim' | 'real';
  readonly status: RolloutStatusWord;
  readonly progress: number | null;
  /** "left_joint1" … "left_gripper", "right_…" (the file's own names). */
  readonly jointNames: readonly string[];
  readonly timesS: readonly number[];
  /** One row per time, one value per joint name. */
  readonly positions: readonly (readonly number[])[];
}

/** A real episode beside its sim twin (same policy, layout set, layout; same seed where there is one). */
export interface ReplayView {
  readonly real: JointTrace;
  readonly sim: JointTrace | null;
  /** Why there is no sim twin, in words. */
  readonly simNote: string | null;
  /** The joints both name (arm joints and grippers), in the real file's order. */
  readonly errorJointNames: readonly string[];
  /** Per real time: sim − real per error joint, rad (the sim linearly interpolated; null past its end). */
  readonly errorRad: readonly (readonly (number | null)[])[];
  /** Root-mean-square of each error joint over the overlap, rad. */
  readonly rmsErrorRad: readonly (number | null)[];
}

/** One layout of a stored set, for the 3D view. */
export interface LayoutView {
  readonly layoutSet: string;
  readonly task: string;
  readonly layout: Layout;
}

// ---- the event stream (WebSocket, JSON text frames) ----------------------------------------

export type StationEvent =
  | { readonly type: 'hello'; readonly station: StationInfo; readonly run: RolloutRun | null }
  | { readonly type: 'rig'; readonly rig: RigStatus }
  | { readonly type: 'run'; readonly run: RolloutRun }
  /** The store changed (a rollout stored): lists should reload. */
  | { readonly type: 'rollouts-changed' }
  /** The eval session's state changed (a new step, a prompt, a line). */
  | SessionEvent
  /** The teleop recording's state changed (a take, a reset, a line). */
  | TeleopEvent
  /** The projector shows a new frame (its PNG at PROJECTOR_FRAME_PATH). */
  | { readonly type: 'projector'; readonly projector: ProjectorState };

// ---- calibrations (the Rig page) -----------------------------------------------------------

/** A calibration the station runs with now. */
export interface CalibrationInUse {
  /** What it calibrates: "rig model", "sim twin physics", "sim cameras", "projector". */
  readonly what: string;
  /** Its name (and version), or "none" with what to do. */
  readonly name: string;
  readonly version: number | null;
  readonly sha256: string | null;
  /** Where it comes from, or what to know about it, in words. */
  readonly note: string;
}

export interface CalibrationsView {
  readonly inUse: readonly CalibrationInUse[];
  /** Per kind in the store: how many, and the newest. */
  readonly stored: readonly { readonly kind: string; readonly count: number; readonly newest: { readonly sha256: string; readonly version: number; readonly createdAt: string } }[];
}

// ---- the projector (the session's layout footprints on the table) ---------------------------

/** The last projector frame's PNG (black when none has gone out yet). */
export const PROJECTOR_FRAME_PATH = '/api/projector/frame.png';
/** The page a browser on the projector's display shows full screen (the Electron shell has its own window). */
export const PROJECTOR_PAGE_PATH = '/projector';

export interface ProjectorState {
  /** False when the station was started without a projector calibration: nothing is projected. */
  readonly configured: boolean;
  /** The projector and its calibration, or what to do to get one, in words. */
  readonly description: string;
  /** Counts frames; the page reloads the frame when it changes. 0 = nothing shown yet. */
  readonly seq: number;
  /** What is on the table now: a layout's footprints, black, or nothing sent yet. */
  readonly showing: 'layout' | 'black' | 'nothing';
  readonly layoutSetSha256: string | null;
  readonly layoutIndex: number | null;
  /** The last PJLink trouble (the frame went out, the projector may not show it), or null. */
  readonly problem: string | null;
}

// ---- eval sessions (the Session view) ------------------------------------------------------

/** Plans a session (as 'tandem session plan') and starts it on the station's rig with the UI's operator. */
export interface StartSessionRequest {
  /** The layout set's SHA-256 (it must be in the store). */
  readonly layoutSet: string;
  /** Policy specs; two or more for a blind A/B session. */
  readonly policies: readonly string[];
  readonly perLayout: number;
  readonly blind: boolean;
  /** The operator's time; default 75. */
  readonly minutes?: number;
  readonly seed?: number;
  /** Episode length; default the task's (shorter only for rehearsals). */
  readonly seconds?: number;
  /** Layout indices to use; default every layout of the set. */
  readonly layouts?: readonly number[];
  /** Break reminder interval, minutes; default 30. */
  readonly breakMinutes?: number;
  /** Who scores (stored with each score). */
  readonly operator?: string;
  /** The page's id for this click: a repeat (double click, retried request) is refused, not run twice. */
  readonly requestId?: string;
  /** Pre-register the A/B analysis (two policies): fixed in the plan before the first rollout. */
  readonly analysis?: { readonly metric?: 'task-progress' | 'full-success'; readonly alpha?: number; readonly margin?: number; readonly stoppingRule?: 'difference' | 'difference-or-no-difference' };
  /** End the session by itself once the analysis's stopping rule holds (needs `analysis`). */
  readonly stopEarly?: boolean;
}

/** GET /api/sessions/ID/results: what the session has shown so far, on screen and printable. */
export interface PolicyResult {
  readonly label: string;
  /** The policy, once a blind session has ended (always for an open-label one). */
  readonly spec?: string;
  readonly scored: number;
  /** Per tier present, then 'all'; empty before the first score. */
  readonly tiers: readonly TierSummary[];
}

export interface ScoredEpisode {
  readonly slot: number;
  readonly attempt: number;
  readonly label: string;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly rolloutId: number | null;
  readonly progress: number;
  readonly summary: string;
}

export interface SessionResults {
  readonly ended: boolean;
  readonly blind: boolean;
  readonly policies: readonly PolicyResult[];
  /** Two-policy sessions only. */
  readonly verdict: SequentialVerdict | null;
  /**
   * The plan's pre-registered analysis after every scored pair (null without one): B − A, its
   * anytime-valid bounds, the verdict in words; and whether the session stopped early by it.
   */
  readonly analysis: (AnytimeComparison & { readonly analysisSha256: string; readonly stoppedEarly: boolean }) | null;
  readonly episodes: readonly ScoredEpisode[];
  /** label → spec, once the session has ended (blind), or always (open label). */
  readonly key: Readonly<Record<string, string>> | null;
}

/** An open or ended eval session in the store, for the picker. */
export interface SessionSummary {
  readonly id: number;
  readonly task: string;
  readonly layoutSetSha256: string;
  readonly blind: boolean;
  /** What the operator sees: "policy A" in a blind plan, else the specs. */
  readonly labels: readonly string[];
  readonly rollouts: number;
  readonly done: number;
  readonly scored: number;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly operator: string | null;
  /**
   * An open session the station stopped without stopping it (killed, crashed): where it was, in
   * words ("Rollout 2 of 4 was running …"), and when its last step was journalled; null otherwise.
   */
  readonly interrupted: { readonly at: string; readonly words: string } | null;
}

/** How the operator scores one object, in the task's terms. */
export interface ObjectScoring {
  readonly id: string;
  readonly kind: string;
  readonly posture: string;
}

/** The score step: a count where the task can be scored by one, and each object's choices. */
export interface ScoringForm {
  /** "in the bin" / "upright", or null when the task is scored object by object only. */
  readonly count: { readonly kind: 'region'; readonly region: string } | { readonly kind: 'upright' } | null;
  /** The task's regions an object can end in ([] for upright-scored tasks). */
  readonly regions: readonly string[];
  readonly objects: readonly ObjectScoring[];
}

/** What the session asks the operator now; `id` is echoed back with the answer. */
export interface PlacementRefusalView {
  readonly object: string;
  readonly sentence: string;
  /** errorMm null: not seen near its outline; errorDeg absent: round from above. */
  readonly objects: readonly { readonly id: string; readonly errorMm: number | null; readonly errorDeg?: number }[];
}

export type SessionPrompt =
  /** `placement`: the check refused the last placement — the object to move, the sentence, each object's measured error. */
  | { readonly id: number; readonly kind: 'place'; readonly placement?: PlacementRefusalView }
  | { readonly id: number; readonly kind: 'score'; readonly run: SessionRunView; readonly scoring: ScoringForm }
  | { readonly id: number; readonly kind: 'reset' }
  | { readonly id: number; readonly kind: 'offer-redo'; readonly why: { readonly kind: string; readonly reason: string } }
  | { readonly id: number; readonly kind: 'paused' }
  | { readonly id: number; readonly kind: 'break' };

export interface SessionRunView {
  readonly rolloutId: number;
  readonly status: RolloutStatusWord;
  readonly reason: string | null;
  readonly finalMode: string;
  readonly wallS: number;
}

/** The slot the session is on: which layout, which (blind) label, which attempt. */
export interface SessionStepView {
  readonly slot: number;
  readonly attempt: number;
  readonly total: number;
  readonly label: string;
  readonly layoutIndex: number;
  readonly tier: number;
  readonly objects: readonly ObjectScoring[];
}

export interface SessionProgressView {
  readonly total: number;
  readonly done: number;
  readonly scored: number;
  readonly closed: number;
  readonly elapsedS: number;
  readonly etaS: number;
  /** Seconds until the next break reminder (null: no reminder while no session runs). */
  readonly breakInS: number | null;
}

/** The state-machine step the session is at, in the engine's terms. */
export type SessionPhase = 'place' | 'running' | 'score' | 'reset' | 'decide' | 'paused' | 'break' | 'between' | 'stopped' | 'ended';

export interface SessionView {
  /** Grows with every view the station sends: a late HTTP answer never overwrites a newer event. */
  readonly seq: number;
  readonly id: number;
  readonly task: string;
  readonly layoutSetSha256: string;
  readonly blind: boolean;
  readonly labels: readonly string[];
  readonly episodeSeconds: number;
  readonly phase: SessionPhase;
  readonly step: SessionStepView | null;
  readonly prompt: SessionPrompt | null;
  /** While a rollout runs: when it started (station wall time, ISO) and its label. */
  readonly running: { readonly startedAt: string; readonly label: string; readonly seconds: number } | null;
  readonly progress: SessionProgressView;
  /** Why it stopped before its end (resume it), when stopped. */
  readonly stoppedBecause: string | null;
  /** The e-stop and interlocks as the session sees them, in words. */
  readonly safety: { readonly estopped: boolean; readonly interlocks: string };
  /** The engine's lines for the operator, newest last (bounded). */
  readonly lines: readonly string[];
}

export type SessionAnswer =
  | { readonly action: 'confirm' }
  | { readonly action: 'pause' }
  | { readonly action: 'stop' }
  | { readonly action: 'score'; readonly endStates: readonly { readonly id: string; readonly region?: string; readonly upright?: boolean; readonly offTable?: boolean }[]; readonly note?: string }
  | { readonly action: 'score-count'; readonly count: number; readonly note?: string }
  /** Abort-and-redo on the score step (a reason is required there), or "redo it" when offered. */
  | { readonly action: 'redo'; readonly reason?: string }
  | { readonly action: 'done' }
  | { readonly action: 'close' }
  | { readonly action: 'carry-on' };

export interface SessionAnswerRequest {
  /** The prompt's id: an answer to a step that has moved on is refused, not applied to the next. */
  readonly prompt: number;
  readonly answer: SessionAnswer;
}

/** The answer was committed to the journal (its next step is in `session`). */
export interface SessionAnswerResponse {
  readonly session: SessionView;
}

export type SessionEvent = { readonly type: 'session'; readonly session: SessionView | null };

// ---- teleop recording (the Teleop view) ----------------------------------------------------

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

// ---- uploads -------------------------------------------------------------------------------

/** What can be uploaded, and the most bytes the station takes for each (said in the refusal). */
export const UPLOAD_LIMITS = {
  'layout-set': { bytes: 8 * 1024 * 1024, what: 'A layout set' },
  'sim-calibration': { bytes: 1024 * 1024, what: 'A sim calibration' },
  policy: { bytes: 256 * 1024 * 1024, what: 'A policy (ONNX model)' },
} as const;
export type UploadKind = keyof typeof UPLOAD_LIMITS;

/** "8 MiB", "256 MiB", "1.5 MiB". */
export function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return `${Number.isInteger(m) ? m : m.toFixed(1)} MiB`;
}

/** The refusal of a file over its kind's limit: the same sentence from the UI's check and the server's. */
export function tooBigSentence(kind: UploadKind, bytes: number): string {
  const l = UPLOAD_LIMITS[kind];
  return `${l.what} upload is at most ${mib(l.bytes)}; this file is ${mib(bytes)}.`;
}

export interface UploadResult {
  readonly kind: UploadKind;
  /** The stored item's id: the layout set's or calibration's SHA-256, or the model file's. */
  readonly sha256: string;
  /** What it is, in words ("bottles-in-the-bin v1, 6 layouts"). */
  readonly summary: string;
  /** For a policy: the spec that runs it (onnx:PATH), for the rollout and session forms. */
  readonly spec?: string;
  /** False when the same item was in the store already. */
  readonly inserted: boolean;
}
