/**
 * The Rig contract: what every rig is, real (YamCanRig, RosRig) or sim (SimRig).
 * Pure: no Node built-ins, no I/O. The control loop owns timing; rigs only read and write.
 *
 * State vectors use the **policy order** everywhere (14 entries):
 *   [left j1..j6, left gripper, right j1..j6, right gripper]
 * Joints in radians (rad/s, N·m); grippers normalised 0 = closed … 1 = open (YAM convention).
 */
import type { Pose3 } from '../tasks/geometry.js';

export type ArmSide = 'left' | 'right';
export const ARM_SIDES: readonly ArmSide[] = ['left', 'right'];
export const JOINTS_PER_ARM = 6;
/** Entries per arm in a state vector: 6 joints + 1 gripper. */
export const DOF_PER_ARM = 7;
export const STATE_DIM = 14;

/** Index of an arm's joint (0..5) or gripper (6) in a 14-entry state vector. */
export function stateIndex(side: ArmSide, jointOrGripper: number): number {
  return (side === 'left' ? 0 : DOF_PER_ARM) + jointOrGripper;
}

export type MotorModelId = 'DM4310' | 'DM4340' | 'DM3507' | 'DM6248' | 'DM8009';

export interface JointSpec {
  readonly name: string;
  readonly minRad: number;
  readonly maxRad: number;
  readonly maxVelocityRadS: number;
  readonly maxTorqueNm: number;
  readonly motor: MotorModelId;
  /** MIT gains used for position control. */
  readonly kp: number;
  readonly kd: number;
}

export interface GripperSpec {
  readonly name: string;
  readonly motor: MotorModelId;
  /** Finger stroke (both fingers together) from closed to open. */
  readonly strokeM: number;
  /** Motor travel from closed to open, radians, before stall calibration. */
  readonly motorTravelRad: number;
  readonly kp: number;
  readonly kd: number;
  readonly maxTorqueNm: number;
}

export interface ArmModel {
  readonly side: ArmSide;
  readonly joints: readonly JointSpec[]; // length 6
  readonly gripper: GripperSpec;
  /** Arm base pose in the table frame. */
  readonly basePose: Pose3;
}

/** Known before connecting: names, limits, gripper ranges. */
export interface RigModel {
  readonly name: string;
  readonly arms: readonly ArmModel[]; // [left, right]
}

/** Lifecycle, after ros2_control: init (no I/O) → configured (talks, reads) → active (powered). */
export type RigMode = 'unconfigured' | 'configured' | 'active' | 'holding' | 'damped' | 'estopped' | 'fault';

export type FaultKind =
  | 'motor-fault'
  | 'no-reply'
  | 'bus-error'
  | 'limit'
  | 'watchdog'
  | 'estop'
  | 'wrong-zero'
  | 'config-mismatch'
  | 'sim-unstable'
  /** A cell input says the cell is not safe to move in (door open, light curtain broken). */
  | 'interlock'
  /** The emulated cell's world could not keep up with real time. */
  | 'emulation-behind';

/** A fault an operator can act on: what happened, to what, what to do next. */
export interface RigFault {
  readonly kind: FaultKind;
  readonly arm?: ArmSide;
  /** Joint index 0..5, or 6 for the gripper. */
  readonly joint?: number;
  readonly message: string;
}

export interface RigState {
  /** Clock time of the measurement, seconds. */
  readonly timeS: number;
  readonly mode: RigMode;
  /** Positions, policy order, 14 entries. */
  readonly position: Float64Array;
  readonly velocity: Float64Array;
  /** Measured effort, N·m (gripper: motor torque). */
  readonly effort: Float64Array;
  readonly faults: readonly RigFault[];
}

export interface RigCommand {
  /** Target positions, policy order, 14 entries. */
  readonly position: Float64Array;
  /** Optional velocity feedforward, rad/s. */
  readonly velocity?: Float64Array;
  /** Optional torque feedforward, N·m (gravity compensation). */
  readonly torqueNm?: Float64Array;
}

export type SafetyEventKind =
  | 'position-clamped'
  | 'velocity-clamped'
  | 'torque-clamped'
  | 'non-finite-command'
  | 'command-dropped'
  | 'watchdog-hold'
  | 'watchdog-damp'
  | 'fault-hold'
  | 'estop'
  /** The cell's interlock opened (or its PLC went silent) while the arms were powered: stopped, then damped. */
  | 'interlock-stop'
  | 'activate-refused';

/** Every intervention of the safety supervisor, recorded in the episode. */
export interface SafetyEvent {
  readonly timeS: number;
  readonly kind: SafetyEventKind;
  readonly arm?: ArmSide;
  readonly joint?: number;
  readonly message: string;
}

export interface Rig {
  readonly model: RigModel;
  /** Talk to the hardware, read state, verify the configuration; no motion. */
  configure(): Promise<void>;
  /** Enable motors and hold the current pose. Refuses (throws RigError) on any joint outside limits. */
  activate(): Promise<void>;
  /**
   * Latest timestamped state. Cheap; never blocks. An implementation may reuse the returned object
   * and its arrays on the next read()/tick() (no allocation at 1 kHz): copy what you keep.
   */
  read(): RigState;
  /**
   * Apply one command through the safety supervisor; returns what was actually applied (its arrays
   * may be reused by the next write: copy what you keep).
   */
  write(cmd: RigCommand): RigCommand;
  /**
   * One control cycle, called by the control loop after write() (if any) — every cycle, whether or
   * not a command arrived: runs the safety supervisor's per-cycle checks (watchdog, faults, e-stop
   * progression) and drives the motors with its output. Never blocks; never owns a timer.
   */
  tick(): void;
  /** Safe hold at the current pose. */
  hold(): void;
  /** Emergency stop: stop within one control cycle, then damp. */
  estop(reason: string): void;
  /** Damp and disable. */
  deactivate(): Promise<void>;
  /** Safety events since the last call (drained). */
  takeSafetyEvents(): SafetyEvent[];
  /** Release the transport (serial ports, sockets) after deactivate(); optional for rigs that hold none. */
  close?(): Promise<void>;
  /**
   * The statistics of the rig's own motor loop since it was last activated, for a rig that runs one
   * (a rig thread); absent where the caller's control loop is the motor loop.
   */
  loopStats?(): Promise<MotorLoopStats>;
}

/** What a motor loop measured about itself (src/rig/control-loop.ts's LoopStats, and the supervisor's side). */
export interface MotorLoopStats {
  readonly rateHz: number;
  readonly cycles: number;
  readonly achievedHz: number;
  /** Woke more than half a period after the deadline. */
  readonly lateCycles: number;
  /** Work ran past the next deadline. */
  readonly overruns: number;
  readonly jitterP50Ms: number;
  readonly jitterP99Ms: number;
  readonly jitterMaxMs: number;
  /** Times the supervisor's watchdog held because the commands went stale. */
  readonly watchdogHolds: number;
  /** The oldest the latest command got while the rig was active, ms. */
  readonly longestCommandAgeMs: number;
}

/** What the cell's interlock inputs say now. `reason` is an operator's sentence when open. */
export interface InterlockReading {
  readonly open: boolean;
  readonly reason?: string;
}

/**
 * The cell's interlock (e-stop circuit, door, light curtain, the PLC itself), as the safety
 * supervisor reads it on every write and tick. Synchronous and cheap: an implementation keeps the
 * latest value its inputs reported and must answer "open" whenever it cannot vouch for "closed"
 * (a dropped connection, a stale heartbeat, a bad status) — never awaiting anything here.
 */
export interface CellInterlock {
  current(): InterlockReading;
}

/** Wall time on the real rig, stepped physics time in sim. Nothing else calls Date.now() in loops. */
export interface Clock {
  /** Seconds since the clock's epoch. */
  nowS(): number;
  /** Resolves once the clock reaches tS (sim: steps physics up to tS). The wall clocks serve one waiter at a time (the control loop); virtual time serves any number. */
  waitUntil(tS: number): Promise<void>;
  /**
   * True when time passes on its own while the loop awaits something else (wall time): the loop
   * must then keep the rig ticking while a policy thinks. Absent/false for stepped clocks, where
   * time stands still until waitUntil, so results never depend on how long inference took.
   */
  readonly passesWhileAwaiting?: boolean;
  /**
   * Timers on this clock's time, for what must wait on it besides the loop (a driver's reply
   * deadlines, an emulated adapter's latency). Absent: the wall clock's own setTimeout.
   */
  readonly timer?: ClockTimer;
  /**
   * Time stands still until `work` settles (virtual time only; a wall clock's time passes
   * regardless, so it has none): what the caller awaits between two phases — a file opened or
   * finished between takes — then takes none of the rig's time, whatever the disk did.
   */
  standStill?<T>(work: Promise<T>): Promise<T>;
}

/** Calls `fn` once `delayMs` of the clock's time has passed; returns the cancel. */
export type ClockTimer = (delayMs: number, fn: () => void) => () => void;

/** An error an operator can act on; `fault` carries the structured reason. */
export class RigError extends Error {
  constructor(
    message: string,
    readonly fault: RigFault,
  ) {
    super(message);
    this.name = 'RigError';
  }
}
