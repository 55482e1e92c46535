/**
 * Stall-based gripper limit calibration of one YAM arm, with the arm configured but not active:
 * drives the gripper motor slowly closed until it stalls, then open until it stalls, with the torque
 * bounded by kd × speed, and returns the limits as a calibration record.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ArmSide, Clock, RigFault } from '../../src/rig/contract.js';
import { describeStatus, isFaultStatus, mitFrame } from '../damiao/protocol.js';
import { GRIPPER_INDEX, type ArmLink } from './arm-link.js';

/** Gripper motor positions for fully closed and fully open, from the stall calibration. */
export interface GripperLimits {
  readonly closedRad: number;
  readonly openRad: number;
}

/** A calibration record (the store's `calibrations` table takes it as is). */
export interface GripperCalibrationRecord {
  readonly kind: 'yam-gripper-limits';
  readonly version: number;
  readonly canonicalJson: string;
  readonly sha256: string;
  readonly limits: GripperLimits;
  readonly arm: ArmSide;
}

export interface GripperStallOptions {
  readonly speedRadS?: number;
  readonly kd?: number;
  readonly stallS?: number;
  readonly timeoutS?: number;
}

/** What the calibration uses of the rig: the arm's link, its clock, and how it refuses (a fault becomes the rig's error and event). */
export interface GripperCalibrationContext {
  readonly link: ArmLink;
  readonly side: ArmSide;
  readonly clock: Clock;
  readonly requestTimeoutMs: number;
  refuse(fault: RigFault): Error;
  silentFault(link: ArmLink, silent: readonly number[]): RigFault;
}

export async function calibrateGripperByStall(
  c: GripperCalibrationContext,
  opts: GripperStallOptions = {},
): Promise<GripperCalibrationRecord> {
  const { link, side } = c;
  const speed = opts.speedRadS ?? 2;
  const kd = opts.kd ?? 0.5;
  const stallS = opts.stallS ?? 0.15;
  const timeoutS = opts.timeoutS ?? 8;
  const m = link.motors[GRIPPER_INDEX];
  const silent = await link.special('enable', c.requestTimeoutMs, [GRIPPER_INDEX]);
  if (silent.length > 0) throw c.refuse(c.silentFault(link, silent));
  const stallAt = async (direction: number): Promise<number> => {
    const start = c.clock.nowS();
    let t = start;
    let stillSince = NaN;
    let moved = false;
    for (;;) {
      link.send([
        mitFrame(m.id, { positionRad: 0, velocityRadS: direction * speed, kp: 0, kd, torqueNm: 0 }, m.ranges),
      ]);
      t += 0.005;
      await c.clock.waitUntil(t);
      const v = m.feedback.velocityRadS;
      if (isFaultStatus(m.feedback.status))
        throw c.refuse({
          kind: 'motor-fault',
          arm: side,
          joint: GRIPPER_INDEX,
          message: `Gripper calibration stopped: the ${m.name} motor reports ${describeStatus(m.feedback.status)}.`,
        });
      if (Math.abs(v) > 0.3 * speed) moved = true;
      if (Math.abs(v) < 0.05 * speed && (moved || t - start > 0.5)) {
        if (Number.isNaN(stillSince)) stillSince = t;
        if (t - stillSince >= stallS) return m.positionRad;
      } else stillSince = NaN;
      if (t - start > timeoutS) {
        throw c.refuse({
          kind: 'motor-fault',
          arm: side,
          joint: GRIPPER_INDEX,
          message: `Gripper calibration stopped: the ${m.name} did not stall within ${timeoutS} s; check that the gripper moves freely and its motor is the configured one.`,
        });
      }
    }
  };
  let closedRad: number;
  let openRad: number;
  try {
    closedRad = await stallAt(-1);
    openRad = await stallAt(1);
  } finally {
    // Every way out — stalled, timed out, faulted, bus gone — leaves the gripper disabled.
    await link.special('disable', c.requestTimeoutMs, [GRIPPER_INDEX]);
  }
  if (Math.abs(openRad - closedRad) < 1) {
    throw c.refuse({
      kind: 'motor-fault',
      arm: side,
      joint: GRIPPER_INDEX,
      message: `Gripper calibration found only ${Math.abs(openRad - closedRad).toFixed(2)} rad between closed and open; something blocks the ${side} gripper. Clear it, then calibrate again.`,
    });
  }
  const limits: GripperLimits = { closedRad: round6(closedRad), openRad: round6(openRad) };
  const body = {
    kind: 'yam-gripper-limits',
    version: 1,
    arm: side,
    motorId: m.id,
    motorModel: m.model,
    ...limits,
    stallTorqueNm: round6(kd * speed),
    speedRadS: speed,
  };
  const canonicalJson = canonicalize(body)!;
  return {
    kind: 'yam-gripper-limits',
    version: 1,
    canonicalJson,
    sha256: createHash('sha256').update(canonicalJson, 'utf8').digest('hex'),
    limits,
    arm: side,
  };
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
