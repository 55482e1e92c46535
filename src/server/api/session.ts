/**
 * The Session view: planning and working an operator eval session — the engine's prompts and the
 * operator's answers, progress, results. Pure (no Node built-ins): the server and the operator UI
 * share it; src/server/api-types.ts gathers every feature.
 */
import type { AnytimeComparison } from '../../analysis/anytime-ab.js';
import type { RolloutStatusWord } from './rollouts.js';
import type { SequentialVerdict } from '../../analysis/sequential.js';
import type { TierSummary } from '../../analysis/tier-summary.js';
import type { PolicyAssists } from '../../session/assists.js';

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
  readonly analysis?: {
    readonly metric?: 'task-progress' | 'full-success';
    readonly alpha?: number;
    readonly margin?: number;
    readonly stoppingRule?: 'difference' | 'difference-or-no-difference';
  };
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
  /** Per policy label: the operator's takeovers with the leader (assists) over the rollouts that ran. */
  readonly assists: readonly PolicyAssistsView[];
}

/** A policy's assists in a session, as the session's export counts them (src/session/assists.ts). */
export type PolicyAssistsView = PolicyAssists;

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
  | {
      readonly id: number;
      readonly kind: 'offer-redo';
      readonly why: { readonly kind: string; readonly reason: string };
    }
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
export type SessionPhase =
  | 'place'
  | 'running'
  | 'score'
  | 'reset'
  | 'decide'
  | 'paused'
  | 'break'
  | 'between'
  | 'stopped'
  | 'ended';

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
  /** The operator's takeover with the leader arm while a rollout runs on a station with a leader; else null. */
  readonly takeover: SessionTakeoverView | null;
}

export interface SessionTakeoverView {
  /** The leader, as its driver describes it. */
  readonly leader: string;
  /** The operator holds the arms (the policy paused); false: the policy drives. */
  readonly driving: boolean;
  /** Stretches the operator drove in this rollout, and in the session so far (this rollout's included). */
  readonly stretches: number;
  readonly sessionStretches: number;
}

export type SessionAnswer =
  | { readonly action: 'confirm' }
  | { readonly action: 'pause' }
  | { readonly action: 'stop' }
  | {
      readonly action: 'score';
      readonly endStates: readonly {
        readonly id: string;
        readonly region?: string;
        readonly upright?: boolean;
        readonly offTable?: boolean;
      }[];
      readonly note?: string;
    }
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
