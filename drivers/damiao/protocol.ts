/**
 * Damiao MIT-mode motor protocol: special frames, MIT command packing, feedback unpacking, registers,
 * status names. Pure byte arithmetic on 8-byte CAN payloads; ranges come from src/rig/motors.ts or,
 * better, from the motor's own registers 21–23.
 */
import { KD_MAX, KP_MAX, type MotorRanges } from '../../src/rig/motors.js';
import type { CanFrame } from '../can/frame.js';

export const MIT_MODE_OFFSET = 0x000;
/** Replies come on motor ID + 0x10 (the YAM's master-ID convention). */
export const FEEDBACK_ID_OFFSET = 0x10;
export const REGISTER_CAN_ID = 0x7ff;

export type SpecialCommand = 'enable' | 'disable' | 'zero' | 'clear-error';
const SPECIAL_LAST_BYTE: Readonly<Record<SpecialCommand, number>> = {
  enable: 0xfc,
  disable: 0xfd,
  zero: 0xfe,
  'clear-error': 0xfb,
};

export function specialFrame(motorId: number, command: SpecialCommand): CanFrame {
  const data = new Uint8Array(8).fill(0xff);
  data[7] = SPECIAL_LAST_BYTE[command];
  return { id: motorId + MIT_MODE_OFFSET, extended: false, data };
}

/** Which special command an 8-byte payload is, if any (used by the emulator). */
export function parseSpecial(data: Uint8Array): SpecialCommand | undefined {
  if (data.length !== 8) return undefined;
  for (let i = 0; i < 7; i++) if (data[i] !== 0xff) return undefined;
  for (const [k, v] of Object.entries(SPECIAL_LAST_BYTE)) if (data[7] === v) return k as SpecialCommand;
  return undefined;
}

/** floor((clamp(x) − min) × (2^bits − 1) / (max − min)). */
export function floatToUint(x: number, min: number, max: number, bits: number): number {
  const c = x < min ? min : x > max ? max : x;
  return Math.floor(((c - min) * ((1 << bits) - 1)) / (max - min));
}

export function uintToFloat(u: number, min: number, max: number, bits: number): number {
  return (u * (max - min)) / ((1 << bits) - 1) + min;
}

export interface MitCommand {
  positionRad: number;
  velocityRadS: number;
  kp: number;
  kd: number;
  torqueNm: number;
}

/** Packs an MIT command into `out` (8 bytes). NaN is treated by the caller, never sent. */
export function packMitInto(cmd: MitCommand, r: MotorRanges, out: Uint8Array): void {
  const p = floatToUint(cmd.positionRad, -r.pMaxRad, r.pMaxRad, 16);
  const v = floatToUint(cmd.velocityRadS, -r.vMaxRadS, r.vMaxRadS, 12);
  const kp = floatToUint(cmd.kp, 0, KP_MAX, 12);
  const kd = floatToUint(cmd.kd, 0, KD_MAX, 12);
  const t = floatToUint(cmd.torqueNm, -r.tMaxNm, r.tMaxNm, 12);
  out[0] = p >> 8;
  out[1] = p & 0xff;
  out[2] = v >> 4;
  out[3] = ((v & 0xf) << 4) | (kp >> 8);
  out[4] = kp & 0xff;
  out[5] = kd >> 4;
  out[6] = ((kd & 0xf) << 4) | (t >> 8);
  out[7] = t & 0xff;
}

export function mitFrame(motorId: number, cmd: MitCommand, r: MotorRanges): CanFrame {
  const data = new Uint8Array(8);
  packMitInto(cmd, r, data);
  return { id: motorId + MIT_MODE_OFFSET, extended: false, data };
}

export function unpackMit(data: Uint8Array, r: MotorRanges): MitCommand {
  const p = (data[0] << 8) | data[1];
  const v = (data[2] << 4) | (data[3] >> 4);
  const kp = ((data[3] & 0xf) << 8) | data[4];
  const kd = (data[5] << 4) | (data[6] >> 4);
  const t = ((data[6] & 0xf) << 8) | data[7];
  return {
    positionRad: uintToFloat(p, -r.pMaxRad, r.pMaxRad, 16),
    velocityRadS: uintToFloat(v, -r.vMaxRadS, r.vMaxRadS, 12),
    kp: uintToFloat(kp, 0, KP_MAX, 12),
    kd: uintToFloat(kd, 0, KD_MAX, 12),
    torqueNm: uintToFloat(t, -r.tMaxNm, r.tMaxNm, 12),
  };
}

export interface MotorFeedback {
  /** Status nibble: 0x1 enabled, 0x0 disabled, 0x8.. faults. */
  status: number;
  /** Low nibble of the motor's ID as it reports it. */
  idNibble: number;
  /** Raw (wrapped) position in the motor's ±P_MAX range. */
  positionRad: number;
  velocityRadS: number;
  torqueNm: number;
  mosfetTempC: number;
  rotorTempC: number;
}

export function unpackFeedbackInto(data: Uint8Array, r: MotorRanges, out: MotorFeedback): void {
  out.status = data[0] >> 4;
  out.idNibble = data[0] & 0xf;
  out.positionRad = uintToFloat((data[1] << 8) | data[2], -r.pMaxRad, r.pMaxRad, 16);
  out.velocityRadS = uintToFloat((data[3] << 4) | (data[4] >> 4), -r.vMaxRadS, r.vMaxRadS, 12);
  out.torqueNm = uintToFloat(((data[4] & 0xf) << 8) | data[5], -r.tMaxNm, r.tMaxNm, 12);
  out.mosfetTempC = data[6];
  out.rotorTempC = data[7];
}

export function unpackFeedback(data: Uint8Array, r: MotorRanges): MotorFeedback {
  const out: MotorFeedback = {
    status: 0,
    idNibble: 0,
    positionRad: 0,
    velocityRadS: 0,
    torqueNm: 0,
    mosfetTempC: 0,
    rotorTempC: 0,
  };
  unpackFeedbackInto(data, r, out);
  return out;
}

/** Packs a feedback payload (used by the emulator). */
export function packFeedback(fb: MotorFeedback, r: MotorRanges): Uint8Array {
  const p = floatToUint(fb.positionRad, -r.pMaxRad, r.pMaxRad, 16);
  const v = floatToUint(fb.velocityRadS, -r.vMaxRadS, r.vMaxRadS, 12);
  const t = floatToUint(fb.torqueNm, -r.tMaxNm, r.tMaxNm, 12);
  return Uint8Array.of(
    ((fb.status & 0xf) << 4) | (fb.idNibble & 0xf),
    p >> 8,
    p & 0xff,
    v >> 4,
    ((v & 0xf) << 4) | (t >> 8),
    t & 0xff,
    Math.max(0, Math.min(255, Math.round(fb.mosfetTempC))),
    Math.max(0, Math.min(255, Math.round(fb.rotorTempC))),
  );
}

export const STATUS_DISABLED = 0x0;
export const STATUS_ENABLED = 0x1;
export const STATUS_LOST_COMMUNICATION = 0xd;

const STATUS_NAMES: Readonly<Record<number, string>> = {
  0x0: 'disabled',
  0x1: 'enabled',
  0x8: 'over-voltage',
  0x9: 'under-voltage',
  0xa: 'over-current',
  0xb: 'MOSFET over-temperature',
  0xc: 'rotor over-temperature',
  0xd: 'loss of communication (its watchdog expired)',
  0xe: 'overload',
};

const STATUS_ADVICE: Readonly<Record<number, string>> = {
  0x8: 'check the supply voltage',
  0x9: 'check the supply voltage and the power cable',
  0xa: 'check for a collision or a blocked joint',
  0xb: 'let the motor cool down',
  0xc: 'let the motor cool down',
  0xd: 'check the CAN cable and the adapter',
  0xe: 'reduce the load on the joint',
};

export function statusName(status: number): string {
  return STATUS_NAMES[status] ?? `unknown status 0x${status.toString(16)}`;
}

export function isFaultStatus(status: number): boolean {
  return status !== STATUS_ENABLED && status !== STATUS_DISABLED;
}

/** "over-current: check for a collision or a blocked joint". */
export function describeStatus(status: number): string {
  const advice = STATUS_ADVICE[status];
  return advice ? `${statusName(status)}; ${advice}` : statusName(status);
}

// ---- registers ------------------------------------------------------------------------------

export const RID = {
  KT: 1,
  MASTER_ID: 7,
  ID: 8,
  TIMEOUT: 9,
  CONTROL_MODE: 10,
  SOFTWARE_VERSION: 14,
  GEAR_RATIO: 20,
  PMAX: 21,
  VMAX: 22,
  TMAX: 23,
} as const;

/** Registers that hold integers; the rest are IEEE float32 (per Damiao's own host code). */
export function isIntegerRegister(rid: number): boolean {
  return (rid >= 7 && rid <= 10) || (rid >= 13 && rid <= 16) || rid === 35 || rid === 36;
}

/** Register 9 counts 50 µs ticks: 8000 = 400 ms. */
export const TIMEOUT_TICK_MS = 0.05;

export const REG_READ = 0x33;
export const REG_WRITE = 0x55;
export const REG_SAVE = 0xaa;

export function registerReadFrame(motorId: number, rid: number): CanFrame {
  return {
    id: REGISTER_CAN_ID,
    extended: false,
    data: Uint8Array.of(motorId & 0xff, (motorId >> 8) & 0xff, REG_READ, rid, 0, 0, 0, 0),
  };
}

export function registerWriteFrame(motorId: number, rid: number, value: number): CanFrame {
  const data = new Uint8Array(8);
  data[0] = motorId & 0xff;
  data[1] = (motorId >> 8) & 0xff;
  data[2] = REG_WRITE;
  data[3] = rid;
  encodeRegisterValue(rid, value, data);
  return { id: REGISTER_CAN_ID, extended: false, data };
}

export function registerSaveFrame(motorId: number): CanFrame {
  return {
    id: REGISTER_CAN_ID,
    extended: false,
    data: Uint8Array.of(motorId & 0xff, (motorId >> 8) & 0xff, REG_SAVE, 0, 0, 0, 0, 0),
  };
}

export function encodeRegisterValue(rid: number, value: number, data: Uint8Array): void {
  const view = new DataView(data.buffer, data.byteOffset + 4, 4);
  if (isIntegerRegister(rid)) view.setUint32(0, value >>> 0, true);
  else view.setFloat32(0, value, true);
}

export interface RegisterReply {
  motorId: number;
  op: number;
  rid: number;
  value: number;
}

/** A register answer: `[id_lo, id_hi, 0x33|0x55, RID, value LE]` arriving on the motor's feedback ID. */
export function parseRegisterReply(data: Uint8Array): RegisterReply | undefined {
  if (data.length !== 8 || (data[2] !== REG_READ && data[2] !== REG_WRITE)) return undefined;
  const rid = data[3];
  const view = new DataView(data.buffer, data.byteOffset + 4, 4);
  return {
    motorId: data[0] | (data[1] << 8),
    op: data[2],
    rid,
    value: isIntegerRegister(rid) ? view.getUint32(0, true) : view.getFloat32(0, true),
  };
}

// ---- position unwrapping ---------------------------------------------------------------------

/**
 * Continuous position from a reading that wraps at ±P_MAX. The first reading beyond ±π is shifted by
 * ∓2π (the vendor's start-up rule); after that, a jump of more than P_MAX between readings is a wrap.
 */
export class PositionUnwrapper {
  private last = NaN;
  private turns = 0;

  /**
   * @param chooseStart maps the first raw reading to the continuous position; default is the vendor rule
   *   (shift beyond ±π by ∓2π). A rig passes a rule that prefers the candidate inside the joint limits.
   */
  constructor(
    private readonly pMaxRad: number,
    private readonly chooseStart: (rawRad: number) => number = vendorStartRule,
  ) {}

  reset(): void {
    this.last = NaN;
    this.turns = 0;
  }

  get started(): boolean {
    return !Number.isNaN(this.last);
  }

  update(rawRad: number): number {
    const span = 2 * this.pMaxRad;
    if (Number.isNaN(this.last)) {
      this.last = rawRad;
      this.turns = 0;
      const q = this.chooseStart(rawRad);
      this.startShift = q - rawRad;
      return q;
    }
    const d = rawRad - this.last;
    if (d > this.pMaxRad) this.turns -= 1;
    else if (d < -this.pMaxRad) this.turns += 1;
    this.last = rawRad;
    return rawRad + this.turns * span + this.startShift;
  }

  /** The raw motor position that corresponds to a continuous joint position (for commands). */
  toRaw(continuousRad: number): number {
    return continuousRad - this.turns * 2 * this.pMaxRad - this.startShift;
  }

  private startShift = 0;
}

export function vendorStartRule(rawRad: number): number {
  if (rawRad > Math.PI) return rawRad - 2 * Math.PI;
  if (rawRad < -Math.PI) return rawRad + 2 * Math.PI;
  return rawRad;
}

/** Start rule for a joint with limits: the raw reading if it is inside them, else a ±2π shift that is. */
export function limitAwareStartRule(minRad: number, maxRad: number): (rawRad: number) => number {
  return (raw) => {
    if (raw >= minRad && raw <= maxRad) return raw;
    for (const c of [raw - 2 * Math.PI, raw + 2 * Math.PI]) if (c >= minRad && c <= maxRad) return c;
    return raw;
  };
}

// ---- feedback plausibility -------------------------------------------------------------------

/**
 * Two replies read back to back were still generated at least this far apart at the motor: a motor
 * answers one command per control cycle, and every control rate tandem runs is ≥ 50 Hz. A longer
 * floor only makes the check more permissive.
 */
export const MIN_REPLY_INTERVAL_S = 0.02;
/** Position quantisation (25 rad / 65535 ≈ 0.0004 rad) and the motor's own latency, with room to spare. */
export const POSITION_STEP_MARGIN_RAD = 0.05;

/**
 * The largest position change a motor can report between two replies `elapsedS` apart: its V_MAX
 * (the top of its velocity encoding; no motor outruns its own range) over at least one reply interval.
 */
export function maxPositionStepRad(r: MotorRanges, elapsedS: number): number {
  return r.vMaxRadS * Math.max(MIN_REPLY_INTERVAL_S, elapsedS) + POSITION_STEP_MARGIN_RAD;
}

/** Shortest step from one raw reading to the next across the ±P_MAX wrap (as PositionUnwrapper reads it). */
export function rawStepRad(previousRawRad: number, rawRad: number, pMaxRad: number): number {
  const d = rawRad - previousRawRad;
  if (d > pMaxRad) return d - 2 * pMaxRad;
  if (d < -pMaxRad) return d + 2 * pMaxRad;
  return d;
}
