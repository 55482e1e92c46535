/**
 * Table-frame tool targets → joint angles of one arm, through the rig's own kinematics
 * (src/rig/kinematics.ts: damped-least-squares IK on the YAM chain).
 */
import type { ArmModel, ArmSide } from '../../rig/contract.js';
import { forwardKinematicsTable, linkFramesTable, poseToFrame, type Frame } from '../../rig/kinematics.js';
import { solveIk } from '../../rig/inverse-kinematics.js';
import { cross, dot, normalize, scale, sub, type Vec3 } from './frames.js';

/**
 * Where the fingertip pads meet, in the gripper frame: along the approach axis (−z) from the
 * flange. The grasp planners place this point, not the flange.
 */
export const DEFAULT_TOOL_OFFSET_M: Vec3 = [0, 0, -0.12];

/** What a grasp, carry or push asks of one arm. */
export interface ToolTarget {
  /** The tool point (between the fingertip pads), table frame. */
  readonly position: Vec3;
  /** Unit approach axis (from flange toward the fingers), table frame. */
  readonly approach: Vec3;
  /** Unit direction the fingers open along (gripper ±y); omitted = free about the approach axis. */
  readonly closing?: Vec3;
}

export interface ArmReach {
  readonly side: ArmSide;
  /** Base origin, table frame. */
  readonly basePosition: Vec3;
  /** Joint angles (6) reaching the target, or undefined when no configuration within limits does. */
  solve(target: ToolTarget, seed?: ArrayLike<number>): Float64Array | undefined;
  /** The tool frame (table frame) at joint angles q: tool point, approach and closing axes. */
  toolAt(q: ArrayLike<number>): { position: Vec3; approach: Vec3; closing: Vec3 };
  /** The arm's skeleton at q, table frame: link origins base, link1 … link5, gripper (flange). */
  skeletonAt(q: ArrayLike<number>): Vec3[];
}

/** Joint-limit margin kept by every plan, so the safety supervisor never has to clamp us. */
const LIMIT_MARGIN_RAD = 0.05;

export function armReach(arm: ArmModel, toolOffsetM: Vec3 = DEFAULT_TOOL_OFFSET_M): ArmReach {
  const limits = arm.joints.map((j) => [j.minRad + LIMIT_MARGIN_RAD, j.maxRad - LIMIT_MARGIN_RAD] as const);
  const baseFrame = poseToFrame(arm.basePose);
  const baseRot = baseFrame.rotation;
  const toBase = (v: Vec3): Vec3 => [
    baseRot[0] * v[0] + baseRot[3] * v[1] + baseRot[6] * v[2],
    baseRot[1] * v[0] + baseRot[4] * v[1] + baseRot[7] * v[2],
    baseRot[2] * v[0] + baseRot[5] * v[1] + baseRot[8] * v[2],
  ];
  const frame: Frame = { rotation: new Float64Array(9), position: new Float64Array(3) };
  return {
    side: arm.side,
    basePosition: [arm.basePose.position[0], arm.basePose.position[1], arm.basePose.position[2]],
    solve(target, seed) {
      const local = sub(target.position, this.basePosition);
      const position = toBase(local);
      const approach = toBase(normalize(target.approach));
      const options = {
        seed,
        seeds: seed ? 8 : 12,
        limitsRad: limits,
        toolOffsetM: toolOffsetM,
        positionToleranceM: 1e-3,
        orientationToleranceRad: 0.01,
      };
      if (!target.closing) {
        const r = solveIk({ position, approach }, options);
        return r.ok ? r.q : undefined;
      }
      // The two fingers are alike: closing along c or −c is the same grasp. Take whichever
      // configuration is nearer the seed (the wrist then turns least).
      const z = scale(approach, -1);
      const yRaw = toBase(target.closing);
      const y0 = normalize(sub(yRaw, scale(z, dot(yRaw, z))));
      let best: Float64Array | undefined;
      let bestDist = Infinity;
      for (const sign of [1, -1]) {
        const y = scale(y0, sign);
        const x = cross(y, z);
        const rotation = [x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]];
        const r = solveIk({ position, rotation }, options);
        if (!r.ok) continue;
        // Summed over the joints: by the largest change alone, a shoulder move both share ties
        // the two, and the wrist could take the roll near its limit.
        const d = seed ? sumAbsDiff(r.q, seed) : 0;
        if (d < bestDist) {
          best = r.q;
          bestDist = d;
        }
      }
      return best;
    },
    skeletonAt(q) {
      return linkFramesTable(arm, q).map((f) => [f.position[0], f.position[1], f.position[2]]);
    },
    toolAt(q) {
      forwardKinematicsTable(arm, q, frame);
      const R = frame.rotation;
      const t = toolOffsetM;
      return {
        position: [
          frame.position[0] + R[0] * t[0] + R[1] * t[1] + R[2] * t[2],
          frame.position[1] + R[3] * t[0] + R[4] * t[1] + R[5] * t[2],
          frame.position[2] + R[6] * t[0] + R[7] * t[1] + R[8] * t[2],
        ],
        approach: [-R[2], -R[5], -R[8]],
        closing: [R[1], R[4], R[7]],
      };
    },
  };
}

function sumAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m += Math.abs(a[i] - b[i]);
  return m;
}
