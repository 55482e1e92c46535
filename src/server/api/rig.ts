/**
 * The Rig page: the rig's status and motors, faults and safety events, its control loop, the
 * hold/damp/E-stop commands, and the calibrations the station runs with. Pure (no Node built-ins):
 * the server and the operator UI share it; src/server/api-types.ts gathers every feature.
 */
import type { ArmSide, FaultKind, RigMode, SafetyEventKind } from '../../rig/contract.js';

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

/** How often the stream sends the rig's state. */
export const RIG_STREAM_HZ = 20;

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

export type RigCommandName = 'hold' | 'damp' | 'estop';

export const RIG_COMMANDS: readonly RigCommandName[] = ['hold', 'damp', 'estop'];

export interface RigCommandRequest {
  readonly command: RigCommandName;
}

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
  readonly stored: readonly {
    readonly kind: string;
    readonly count: number;
    readonly newest: { readonly sha256: string; readonly version: number; readonly createdAt: string };
  }[];
}
