/**
 * The Leader contract: a device an operator moves by hand whose joint positions a follower rig
 * tracks (a YAM leader arm with its teaching handle, a GELLO Dynamixel arm). Pure: no Node
 * built-ins. Like a Rig, a leader never owns a timer: the teleop loop calls poll() once per
 * control cycle, and replies arriving between cycles overwrite the newest sample in place —
 * latest value wins, there is no queue to fall behind on.
 *
 * Positions are in the follower's policy order (14 entries, src/rig/contract.ts); grippers in the
 * YAM convention, 0 = closed … 1 = open, whatever the device reports natively.
 */
import type { ArmSide } from './contract.js';

/** A button on a leader (the teaching handle's two; GELLO has none). */
export interface LeaderButtonEvent {
  readonly kind: 'button';
  readonly arm: ArmSide;
  /** 0: the handle's top button (toggles sync), 1: the second button. */
  readonly button: number;
  readonly pressed: boolean;
  readonly timeS: number;
}

/** Something the operator should know about the leader's link (garbage dropped, CRC errors, silence). */
export interface LeaderNoteEvent {
  readonly kind: 'note';
  readonly arm?: ArmSide;
  readonly message: string;
  readonly timeS: number;
}

export type LeaderEvent = LeaderButtonEvent | LeaderNoteEvent;

export interface LeaderReading {
  /** 14 entries, policy order; NaN where an arm has never reported. */
  readonly position: Float64Array;
  /** Clock time of each arm's newest complete sample (NaN: none yet), [left, right]. */
  readonly sampleS: Float64Array;
  /** Samples received per arm since configure (a sample counter, so a consumer can tell new from old). */
  readonly samples: Float64Array;
  /** Why an arm's samples cannot be trusted now (too much garbage, a motor fault), per arm; undefined when fine. */
  readonly problem: readonly (string | undefined)[];
}

export interface Leader {
  /** e.g. "YAM leader arms (teaching handle) on /dev/ttyACM1, /dev/ttyACM2". */
  readonly description: string;
  /** Arms this leader moves. */
  readonly arms: readonly ArmSide[];
  /** Opens the links, finds every device, reads a first sample; no torque yet. Rejects with a sentence. */
  configure(): Promise<void>;
  /** Turns on what keeps the leader light in the hand (gravity compensation on a YAM leader). */
  activate(): Promise<void>;
  /** One control cycle: request the next sample and send any torque; never blocks. */
  poll(nowS: number): void;
  /** The newest sample (a buffer reused on the next poll/reply: copy what you keep). */
  latest(): LeaderReading;
  /**
   * Bilateral feedback: servo the leader toward `position` (policy order) with its joints' kp × gain
   * (0.1–0.2 is usual); undefined turns it off. Ignored by leaders with no motors that can push.
   */
  setFeedback(position: ArrayLike<number> | undefined, gain: number): void;
  /** Buttons and notes since the last call (drained). */
  takeEvents(): LeaderEvent[];
  /** Torque off. */
  deactivate(): Promise<void>;
  close(): Promise<void>;
}
