/**
 * One emulated Damiao motor in MIT mode: registers, status nibble, MIT law with the torque clamped to
 * the motor's TMAX, a lumped single-joint dynamics integrated at a fine fixed step, hard stops, and
 * the motor-side watchdog of register 9. A lumped model rather than the sim twin's articulated
 * dynamics because drivers may only import src/rig; it is enough for drivers and timing.
 */
import { MOTOR_RANGES, type MotorRanges } from '../../src/rig/motors.js';
import type { MotorModelId } from '../../src/rig/contract.js';
import {
  RID,
  STATUS_DISABLED,
  STATUS_ENABLED,
  STATUS_LOST_COMMUNICATION,
  TIMEOUT_TICK_MS,
  isFaultStatus,
  unpackMit,
  type MitCommand,
} from '../damiao/protocol.js';

export interface EmulatedMotorOptions {
  readonly id: number;
  readonly model: MotorModelId;
  /** Reflected inertia at the output, kg·m². */
  readonly inertiaKgM2: number;
  /** Viscous damping, N·m·s/rad. */
  readonly dampingNmS: number;
  /** Coulomb friction, N·m. */
  readonly frictionNm: number;
  /** Hard stops in motor radians (joint mechanical limits, gripper fully closed / open). */
  readonly hardStopsRad: readonly [number, number];
  /** Start position, motor radians. */
  readonly initialPositionRad?: number;
  /** Gravity torque amplitude, N·m, applied as −g·sin(q + phase). 0 = none. */
  readonly gravityNm?: number;
  readonly gravityPhaseRad?: number;
  /** Override register values (e.g. a motor flashed with other ranges). */
  readonly registers?: Readonly<Record<number, number>>;
  /**
   * A world that moves this motor's joint instead of the lumped single-joint model (the emulated
   * cell's articulated arms). The motor keeps its registers, status, watchdog and MIT command; the
   * plant reads them through drive() and writes back what its joint did through setMeasured().
   */
  readonly plant?: MotorPlant;
}

/** What drives a motor's joint in an external world (see EmulatedMotorOptions.plant). */
export interface MotorPlant {
  /** Brings the world up to nowS: it reads every motor's drive() and calls setMeasured() per step. */
  advanceTo(nowS: number): void;
}

/**
 * What the motor's power stage does now, in encoder radians: the MIT law's terms while enabled,
 * damping after its watchdog expired, nothing while disabled or faulted. The torque clamp is the
 * world's to apply (tMaxNm).
 */
export interface MotorDrive {
  mode: 'mit' | 'watchdog-damping' | 'off';
  positionRad: number;
  velocityRadS: number;
  kp: number;
  kd: number;
  torqueNm: number;
  tMaxNm: number;
}

/** Damping the motor applies on its own after the watchdog expires, N·m·s/rad. */
const WATCHDOG_DAMPING_NMS = 1.0;
const INTEGRATION_STEP_S = 0.0002;
/** Longest stretch integrated at once; a longer gap (a stalled host) is skipped over, not replayed. */
const MAX_CATCH_UP_S = 0.25;

export class EmulatedMotor {
  readonly id: number;
  readonly model: MotorModelId;
  readonly registers = new Map<number, number>();
  status = STATUS_DISABLED;
  /** Motor-frame position (what the encoder reports, before the zero offset). */
  private encoderRad: number;
  private zeroOffsetRad = 0;
  velocityRadS = 0;
  torqueNm = 0;
  private command: MitCommand = { positionRad: 0, velocityRadS: 0, kp: 0, kd: 0, torqueNm: 0 };
  private lastCommandS = 0;
  private timeS = 0;
  mosfetTempC = 32;
  rotorTempC = 30;
  /** Fault injection: an enable command is answered but the motor stays disabled. */
  refusesEnable = false;
  /** Fault injection: the current fault status comes back right after clear-error (a hot or shorted motor). */
  private faultSurvivesClear = false;
  /** Hard stops in force (fault injection may move them: a blocked gripper, a slipped belt). */
  private stopsRad: readonly [number, number];
  private readonly mitListeners = new Set<(command: Readonly<MitCommand>, accepted: boolean) => void>();

  private readonly driveOut: MotorDrive = {
    mode: 'off',
    positionRad: 0,
    velocityRadS: 0,
    kp: 0,
    kd: 0,
    torqueNm: 0,
    tMaxNm: 0,
  };

  constructor(private readonly opts: EmulatedMotorOptions) {
    this.id = opts.id;
    this.model = opts.model;
    this.encoderRad = opts.initialPositionRad ?? 0;
    this.stopsRad = opts.hardStopsRad;
    const r = MOTOR_RANGES[opts.model];
    this.registers.set(RID.KT, 0.1);
    this.registers.set(RID.MASTER_ID, opts.id + 0x10);
    this.registers.set(RID.ID, opts.id);
    this.registers.set(RID.TIMEOUT, 8000);
    this.registers.set(RID.CONTROL_MODE, 1);
    this.registers.set(RID.SOFTWARE_VERSION, 5012);
    this.registers.set(RID.GEAR_RATIO, 10);
    this.registers.set(RID.PMAX, r.pMaxRad);
    this.registers.set(RID.VMAX, r.vMaxRadS);
    this.registers.set(RID.TMAX, r.tMaxNm);
    for (const [k, v] of Object.entries(opts.registers ?? {})) this.registers.set(Number(k), v);
  }

  /** The ranges the motor itself uses to pack and unpack: its registers, not the catalogue. */
  get ranges(): MotorRanges {
    return {
      pMaxRad: this.registers.get(RID.PMAX)!,
      vMaxRadS: this.registers.get(RID.VMAX)!,
      tMaxNm: this.registers.get(RID.TMAX)!,
    };
  }

  /** Reported position (after the zero offset). */
  get positionRad(): number {
    return this.encoderRad - this.zeroOffsetRad;
  }

  setPositionForTest(positionRad: number): void {
    this.encoderRad = positionRad + this.zeroOffsetRad;
    this.velocityRadS = 0;
  }

  /**
   * The MIT command in force: what the motor is doing now (zero gains until the first command after
   * enable). Tests read its kp to see whether an arm is stiff or only damped.
   */
  get lastCommand(): Readonly<MitCommand> {
    return this.command;
  }

  /** Calls `listener` with every MIT frame the motor receives, decoded, and whether it took it (only when enabled). */
  onMit(listener: (command: Readonly<MitCommand>, accepted: boolean) => void): () => void {
    this.mitListeners.add(listener);
    return () => this.mitListeners.delete(listener);
  }

  enable(nowS: number): void {
    this.advance(nowS);
    if (isFaultStatus(this.status)) return; // a faulted motor needs clear-error first
    if (this.refusesEnable) return;
    this.status = STATUS_ENABLED;
    this.lastCommandS = nowS;
    // Enabling holds nothing until the first MIT command: zero gains.
    this.command = { positionRad: this.positionRad, velocityRadS: 0, kp: 0, kd: 0, torqueNm: 0 };
  }

  disable(nowS: number): void {
    this.advance(nowS);
    if (!isFaultStatus(this.status)) this.status = STATUS_DISABLED;
  }

  zero(nowS: number): void {
    this.advance(nowS);
    this.zeroOffsetRad = this.encoderRad;
  }

  clearError(nowS: number): void {
    this.advance(nowS);
    if (isFaultStatus(this.status) && !this.faultSurvivesClear) this.status = STATUS_DISABLED;
  }

  /**
   * Forces a fault status (fault injection: over-current, over-temperature, …). With
   * `survivesClearError` the status stays after clear-error, as a motor that is still too hot does.
   */
  injectFault(status: number, nowS: number, options: { survivesClearError?: boolean } = {}): void {
    this.advance(nowS);
    this.status = status;
    this.faultSurvivesClear = options.survivesClearError ?? false;
  }

  /** Ends an injected fault for good (the motor cooled down): clear-error clears it again. */
  healFault(): void {
    this.faultSurvivesClear = false;
  }

  /**
   * Fault injection: the motor lost power and came back — disabled, no command in force, answering
   * with feedback that says so. Its position is unchanged (the arm did not move while it was out).
   */
  powerCycle(nowS: number): void {
    this.advance(nowS);
    this.status = STATUS_DISABLED;
    this.faultSurvivesClear = false;
    this.command = { positionRad: this.positionRad, velocityRadS: 0, kp: 0, kd: 0, torqueNm: 0 };
  }

  /** Fault injection: moves the hard stops (motor radians): a blocked gripper, or ±Infinity for a slipped belt. */
  setHardStops(stopsRad: readonly [number, number]): void {
    this.stopsRad = stopsRad;
  }

  mit(data: Uint8Array, nowS: number): void {
    this.advance(nowS);
    this.lastCommandS = nowS;
    const accepted = this.status === STATUS_ENABLED;
    const decoded = accepted || this.mitListeners.size > 0 ? unpackMit(data, this.ranges) : undefined;
    for (const l of this.mitListeners) l(decoded!, accepted);
    if (accepted) this.command = decoded!;
  }

  /** Integrates the dynamics up to nowS at a fixed fine step (or has the plant's world do it). */
  advance(nowS: number): void {
    if (this.opts.plant) {
      this.checkWatchdog(nowS);
      this.opts.plant.advanceTo(nowS);
      return;
    }
    if (nowS <= this.timeS) return;
    if (nowS - this.timeS > MAX_CATCH_UP_S) this.timeS = nowS - MAX_CATCH_UP_S;
    const timeoutMs = (this.registers.get(RID.TIMEOUT) ?? 0) * TIMEOUT_TICK_MS;
    while (this.timeS + INTEGRATION_STEP_S <= nowS) {
      this.timeS += INTEGRATION_STEP_S;
      if (this.status === STATUS_ENABLED && timeoutMs > 0 && (this.timeS - this.lastCommandS) * 1000 > timeoutMs) {
        this.status = STATUS_LOST_COMMUNICATION;
      }
      this.step(INTEGRATION_STEP_S);
    }
  }

  /** The power stage's output for an external world (reused object: read it, do not keep it). */
  drive(): MotorDrive {
    const d = this.driveOut;
    d.tMaxNm = Math.min(this.ranges.tMaxNm, MOTOR_RANGES[this.model].tMaxNm);
    if (this.status === STATUS_ENABLED) {
      const c = this.command;
      d.mode = 'mit';
      d.positionRad = c.positionRad + this.zeroOffsetRad;
      d.velocityRadS = c.velocityRadS;
      d.kp = c.kp;
      d.kd = c.kd;
      d.torqueNm = c.torqueNm;
    } else {
      d.mode = this.status === STATUS_LOST_COMMUNICATION ? 'watchdog-damping' : 'off';
      d.positionRad = this.encoderRad;
      d.velocityRadS = 0;
      d.kp = 0;
      d.kd = d.mode === 'off' ? 0 : WATCHDOG_DAMPING_NMS;
      d.torqueNm = 0;
    }
    return d;
  }

  /** What the external world measured at this motor's joint (encoder radians), after a step. */
  setMeasured(encoderRad: number, velocityRadS: number, torqueNm: number): void {
    this.encoderRad = encoderRad;
    this.velocityRadS = velocityRadS;
    this.torqueNm = torqueNm;
  }

  /** The motor-side watchdog of register 9: no command for longer than it → lost communication. */
  private checkWatchdog(nowS: number): void {
    const timeoutMs = (this.registers.get(RID.TIMEOUT) ?? 0) * TIMEOUT_TICK_MS;
    if (this.status === STATUS_ENABLED && timeoutMs > 0 && (nowS - this.lastCommandS) * 1000 > timeoutMs)
      this.status = STATUS_LOST_COMMUNICATION;
  }

  private step(dt: number): void {
    const o = this.opts;
    const q = this.positionRad;
    const v = this.velocityRadS;
    let motorTorque = 0;
    if (this.status === STATUS_ENABLED) {
      const c = this.command;
      motorTorque = c.kp * (c.positionRad - q) + c.kd * (c.velocityRadS - v) + c.torqueNm;
    } else if (this.status === STATUS_LOST_COMMUNICATION) {
      motorTorque = -WATCHDOG_DAMPING_NMS * v;
    }
    const tMax = Math.min(this.ranges.tMaxNm, MOTOR_RANGES[this.model].tMaxNm);
    if (motorTorque > tMax) motorTorque = tMax;
    else if (motorTorque < -tMax) motorTorque = -tMax;
    this.torqueNm = motorTorque;
    const gravity = o.gravityNm ? -o.gravityNm * Math.sin(this.encoderRad + (o.gravityPhaseRad ?? 0)) : 0;
    let net = motorTorque + gravity - o.dampingNmS * v;
    // Coulomb friction: sticks when the other torques cannot overcome it.
    if (Math.abs(v) < 1e-4) {
      if (Math.abs(net) <= o.frictionNm) net = 0;
      else net -= Math.sign(net) * o.frictionNm;
    } else net -= Math.sign(v) * o.frictionNm;
    let nv = v + (net / o.inertiaKgM2) * dt;
    if (
      Math.abs(v) >= 1e-4 &&
      Math.sign(nv) !== Math.sign(v) &&
      Math.abs(net) <= o.frictionNm + Math.abs(o.dampingNmS * v)
    )
      nv = 0;
    let enc = this.encoderRad + nv * dt;
    const [lo, hi] = this.stopsRad;
    if (enc < lo) {
      enc = lo;
      if (nv < 0) nv = 0;
    } else if (enc > hi) {
      enc = hi;
      if (nv > 0) nv = 0;
    }
    this.encoderRad = enc;
    this.velocityRadS = nv;
  }
}
