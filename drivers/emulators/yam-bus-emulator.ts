/**
 * One YAM arm's CAN bus, emulated at the frame level: 6 joint motors (0x01–0x06) and the gripper
 * (0x07) answering on ID + 0x10, with registers, dynamics and fault injection. Byte framing lives in
 * adapter-emulator.ts; this class sees CAN frames only.
 */
import type { MotorModelId } from '../../src/rig/contract.js';
import { linkFrames } from '../../src/rig/kinematics.js';
import {
  YAM_CHAIN,
  YAM_COULOMB_FRICTION_NM,
  YAM_IDLE_DAMPING,
  YAM_JOINT_LIMITS_RAD,
  YAM_LINK_MASS_KG,
  YAM_FINGER_MASS_KG,
} from '../../src/rig/yam.js';
import type { CanFrame } from '../can/frame.js';
import { EmulatedMotor, type MotorPlant } from './emulated-motor.js';
import {
  FEEDBACK_ID_OFFSET,
  REGISTER_CAN_ID,
  REG_READ,
  REG_SAVE,
  REG_WRITE,
  encodeRegisterValue,
  isIntegerRegister,
  packFeedback,
  parseSpecial,
} from '../damiao/protocol.js';

export const YAM_MOTOR_IDS: readonly number[] = [1, 2, 3, 4, 5, 6, 7];
export const GRIPPER_MOTOR_ID = 7;
const JOINT_MOTORS: readonly MotorModelId[] = ['DM4340', 'DM4340', 'DM4340', 'DM4310', 'DM4310', 'DM4310'];

/**
 * Where the emulated arm starts: home, with joints 2 and 3 resting 0.02 rad above their lower limit
 * (a real arm rests on its stops a hair inside; exactly 0 would read as −0.0002 after quantisation).
 */
export const EMULATED_REST_POSE_RAD: readonly number[] = [0, 0.02, 0.02, 0, 0, 0, 0];

/** Gripper motor stops: closed at 0, open at the model's 6.57 rad of travel. */
export const EMULATED_GRIPPER_STOPS_RAD: readonly [number, number] = [0, 6.57];

export interface YamBusEmulatorOptions {
  /** Start positions for joints 1–6 and the gripper (motor radians). Default home (zeros) and gripper closed. */
  readonly initialPositionsRad?: readonly number[];
  /** Gravity on joints 2–3 (crude sin model). Default off. */
  readonly gravity?: boolean;
  readonly gripperModel?: MotorModelId;
  /** Register overrides per motor ID, e.g. { 2: { 22: 8 } } for a DM4340 flashed with VMAX 8. */
  readonly registers?: Readonly<Record<number, Readonly<Record<number, number>>>>;
  /** Motor IDs that are not on the bus at all. */
  readonly absentMotors?: readonly number[];
  /** Time source in seconds; defaults to performance.now(). */
  readonly nowS?: () => number;
  /** A world that moves every motor's joint instead of the lumped models (the emulated cell). */
  readonly plant?: MotorPlant;
}

/**
 * Lumped inertia per joint at the home pose from the rig's own kinematics: each distal link's mass at
 * the midpoint of its segment, times its squared distance from the joint axis, plus the rotor's
 * reflected inertia. Configuration-independent on purpose; timing and protocol tests do not depend
 * on its accuracy, only on its order of magnitude.
 */
function jointInertias(): number[] {
  const frames = linkFrames([0, 0, 0, 0, 0, 0]);
  const masses = ['link1', 'link2', 'link3', 'link4', 'link5', 'gripper'].map((k) => YAM_LINK_MASS_KG[k]);
  masses[5] += 2 * YAM_FINGER_MASS_KG;
  const comOf = (k: number): number[] => {
    const a = frames[k + 1].position;
    const b = k + 2 < frames.length ? frames[k + 2].position : a;
    return [0, 1, 2].map((d) => (a[d] + b[d]) / 2);
  };
  return YAM_CHAIN.map((c, j) => {
    const f = frames[j + 1];
    const R = f.rotation;
    const axis = [0, 1, 2].map((r) => R[r * 3] * c.axis[0] + R[r * 3 + 1] * c.axis[1] + R[r * 3 + 2] * c.axis[2]);
    let inertia = 0.004; // reflected rotor inertia
    for (let k = j; k < masses.length; k++) {
      const com = comOf(k);
      const d = [0, 1, 2].map((i) => com[i] - f.position[i]);
      const along = d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2];
      const r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] - along * along;
      inertia += masses[k] * Math.max(r2, 0);
    }
    return inertia;
  });
}

export interface BusFaults {
  /** Probability (0..1) that any one reply is dropped. */
  dropProbability: number;
  /** Motors that have stopped answering entirely. */
  silent: Set<number>;
  /** Motors that neither apply nor answer register writes (a write that fails on the wire or in the motor). */
  registerWritesIgnored?: Set<number>;
  /**
   * Motors flashed with another motor's CAN ID: key (the motor's place on the arm, 1–7) answers
   * frames for the value, on the value's reply ID, and no longer answers its own.
   */
  answersAs?: Map<number, number>;
}

/**
 * The emulator's typed faults, for `YamBusEmulator.inject`. Motor numbers are places on the arm
 * (1–6 joints, 7 gripper).
 */
export type EmulatedBusFault =
  | { readonly kind: 'silent'; readonly motor: number }
  | { readonly kind: 'drop-replies'; readonly probability: number }
  /** A status-nibble fault (0x8 over-voltage … 0xE); `survivesClearError` for one that comes straight back. */
  | { readonly kind: 'status'; readonly motor: number; readonly status: number; readonly survivesClearError?: boolean }
  /** The motor lost power and came back disabled. */
  | { readonly kind: 'power-cycle'; readonly motor: number }
  /** Enable is answered but the motor stays disabled. */
  | { readonly kind: 'refuse-enable'; readonly motor: number }
  | { readonly kind: 'register-writes-ignored'; readonly motor: number }
  /** `motor` was flashed with `answersAs`'s CAN ID: two motors answer on that ID, none on `motor`'s. */
  | { readonly kind: 'duplicate-id'; readonly motor: number; readonly answersAs: number }
  /** New hard stops in motor radians: a blocked gripper (narrow) or a slipped belt (±Infinity). */
  | { readonly kind: 'hard-stops'; readonly motor: number; readonly stopsRad: readonly [number, number] };

export class YamBusEmulator {
  readonly motors = new Map<number, EmulatedMotor>();
  readonly faults: Required<BusFaults> = {
    dropProbability: 0,
    silent: new Set(),
    registerWritesIgnored: new Set(),
    answersAs: new Map(),
  };
  /** Frames received, for tests that check what the host sent. */
  framesReceived = 0;
  private rngState = 0x2545f491;
  private readonly nowS: () => number;

  constructor(options: YamBusEmulatorOptions = {}) {
    this.nowS = options.nowS ?? (() => performance.now() / 1000);
    const inertias = jointInertias();
    const absent = new Set(options.absentMotors ?? []);
    for (let j = 0; j < 6; j++) {
      const id = j + 1;
      if (absent.has(id)) continue;
      const [lo, hi] = YAM_JOINT_LIMITS_RAD[j];
      this.motors.set(
        id,
        new EmulatedMotor({
          id,
          model: JOINT_MOTORS[j],
          inertiaKgM2: inertias[j],
          dampingNmS: YAM_IDLE_DAMPING[j],
          frictionNm: YAM_COULOMB_FRICTION_NM[j],
          hardStopsRad: [lo - 0.35, hi + 0.35],
          initialPositionRad: options.initialPositionsRad?.[j] ?? EMULATED_REST_POSE_RAD[j],
          gravityNm: options.gravity && (j === 1 || j === 2) ? 9.81 * 1.5 * 0.2 : 0,
          registers: options.registers?.[id],
          plant: options.plant,
        }),
      );
    }
    if (!absent.has(GRIPPER_MOTOR_ID)) {
      this.motors.set(
        GRIPPER_MOTOR_ID,
        new EmulatedMotor({
          id: GRIPPER_MOTOR_ID,
          model: options.gripperModel ?? 'DM4310',
          inertiaKgM2: 0.002,
          dampingNmS: 0.05,
          frictionNm: 0.05,
          hardStopsRad: EMULATED_GRIPPER_STOPS_RAD,
          initialPositionRad: options.initialPositionsRad?.[6] ?? 0.3,
          registers: options.registers?.[GRIPPER_MOTOR_ID],
          plant: options.plant,
        }),
      );
    }
  }

  now(): number {
    return this.nowS();
  }

  motor(id: number): EmulatedMotor {
    const m = this.motors.get(id);
    if (!m) throw new Error(`no emulated motor ${id}`);
    return m;
  }

  /** Injects one typed fault (see EmulatedBusFault). */
  inject(fault: EmulatedBusFault): void {
    const now = this.nowS();
    switch (fault.kind) {
      case 'silent':
        this.faults.silent.add(fault.motor);
        break;
      case 'drop-replies':
        this.faults.dropProbability = fault.probability;
        break;
      case 'status':
        this.motor(fault.motor).injectFault(fault.status, now, { survivesClearError: fault.survivesClearError });
        break;
      case 'power-cycle':
        this.motor(fault.motor).powerCycle(now);
        break;
      case 'refuse-enable':
        this.motor(fault.motor).refusesEnable = true;
        break;
      case 'register-writes-ignored':
        this.faults.registerWritesIgnored.add(fault.motor);
        break;
      case 'duplicate-id':
        this.faults.answersAs.set(fault.motor, fault.answersAs);
        break;
      case 'hard-stops':
        this.motor(fault.motor).setHardStops(fault.stopsRad);
        break;
    }
  }

  /** The CAN ID a motor answers on (its own, unless a duplicate-id fault re-flashed it). */
  canIdOf(motor: EmulatedMotor): number {
    return this.faults.answersAs.get(motor.id) ?? motor.id;
  }

  /** Every motor that takes frames for CAN ID `id` (two when a duplicate-id fault is in force). */
  private motorsOn(id: number): EmulatedMotor[] {
    const out: EmulatedMotor[] = [];
    for (const m of this.motors.values()) if (this.canIdOf(m) === id) out.push(m);
    return out;
  }

  /** Handles one frame from the host; returns the frames the bus answers with (possibly none). */
  handle(frame: CanFrame): CanFrame[] {
    this.framesReceived++;
    const now = this.nowS();
    if (frame.extended || frame.data.length !== 8) return [];
    if (frame.id === REGISTER_CAN_ID) return this.handleRegister(frame.data, now);
    const out: CanFrame[] = [];
    for (const motor of this.motorsOn(frame.id)) {
      const special = parseSpecial(frame.data);
      if (special === 'enable') motor.enable(now);
      else if (special === 'disable') motor.disable(now);
      else if (special === 'zero') motor.zero(now);
      else if (special === 'clear-error') motor.clearError(now);
      else motor.mit(frame.data, now);
      out.push(...this.reply(motor, () => this.feedbackFrame(motor)));
    }
    return out;
  }

  feedbackFrame(motor: EmulatedMotor): CanFrame {
    const canId = this.canIdOf(motor);
    const data = packFeedback(
      {
        status: motor.status,
        idNibble: canId & 0xf,
        positionRad: motor.positionRad,
        velocityRadS: motor.velocityRadS,
        torqueNm: motor.torqueNm,
        mosfetTempC: motor.mosfetTempC,
        rotorTempC: motor.rotorTempC,
      },
      motor.ranges,
    );
    return { id: canId + FEEDBACK_ID_OFFSET, extended: false, data };
  }

  /** Brings every motor's dynamics up to now (a viewer calls this; replies do it themselves). */
  advanceAll(): void {
    const now = this.nowS();
    for (const m of this.motors.values()) m.advance(now);
  }

  private handleRegister(data: Uint8Array, now: number): CanFrame[] {
    const id = data[0] | (data[1] << 8);
    return this.motorsOn(id).flatMap((motor) => this.handleRegisterOn(motor, id, data, now));
  }

  private handleRegisterOn(motor: EmulatedMotor, id: number, data: Uint8Array, now: number): CanFrame[] {
    motor.advance(now);
    const op = data[2];
    const rid = data[3];
    if (op === REG_WRITE) {
      if (this.faults.registerWritesIgnored.has(motor.id)) return [];
      const view = new DataView(data.buffer, data.byteOffset + 4, 4);
      motor.registers.set(rid, isIntegerRegister(rid) ? view.getUint32(0, true) : view.getFloat32(0, true));
    } else if (op === REG_SAVE) {
      return this.reply(motor, () => ({
        id: id + FEEDBACK_ID_OFFSET,
        extended: false,
        data: Uint8Array.of(id & 0xff, id >> 8, REG_SAVE, 1, 0, 0, 0, 0),
      }));
    } else if (op !== REG_READ) return [];
    if (!motor.registers.has(rid)) return [];
    return this.reply(motor, () => {
      const out = Uint8Array.of(id & 0xff, id >> 8, op, rid, 0, 0, 0, 0);
      encodeRegisterValue(rid, motor.registers.get(rid)!, out);
      return { id: id + FEEDBACK_ID_OFFSET, extended: false, data: out };
    });
  }

  private reply(motor: EmulatedMotor, make: () => CanFrame): CanFrame[] {
    if (this.faults.silent.has(motor.id)) return [];
    if (this.faults.dropProbability > 0 && this.random() < this.faults.dropProbability) return [];
    return [make()];
  }

  /** xorshift32: fault injection must be reproducible run to run. */
  private random(): number {
    let x = this.rngState;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.rngState = x >>> 0;
    return this.rngState / 0x1_0000_0000;
  }
}
