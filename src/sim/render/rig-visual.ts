/**
 * How the rig and the cell look to the sim cameras: YAM links as capsule-like cylinders from each
 * link origin to its child joint (the chain in src/rig/yam.ts), a linear gripper body with two
 * fingers, the table top and the floor. The vendor's meshes are not in the reference, so the look
 * follows the kinematics: every camera sees the arm where the real arm is, at its real thickness
 * give or take a centimetre.
 */
import type { Pose3, ShapePart } from '../../tasks/geometry.js';
import { YAM_CHAIN } from '../../rig/yam.js';
import { LINK_NAMES } from '../../rig/kinematics.js';
import { GRIPPER_GEOMETRY } from '../arm/geometry.js';
import type { Visual } from '../../scene3d/visual.js';
import { cellVisuals } from '../../scene3d/cell-visuals.js';

const ARM_COLOR: readonly [number, number, number] = [58, 60, 66];
const GRIPPER_COLOR: readonly [number, number, number] = [34, 35, 38];
const FINGER_COLOR: readonly [number, number, number] = [178, 180, 184];

/**
 * Link radius, metres, by link name — the sim's capsule radii (src/sim/arm/geometry.ts), so the cameras
 * see the arm exactly as thick as the physics treats it.
 */
const LINK_RADIUS_M: Readonly<Record<string, number>> = {
  base_link: 0.05,
  link1: 0.04,
  link2: 0.035,
  link3: 0.03,
  link4: 0.03,
  link5: 0.03,
};

/**
 * Linear gripper in the gripper frame (approach axis −z, fingers open along ±y): the palm and
 * finger boxes of the sim's own colliders, so the cameras see the hand the physics grasps with.
 * Each finger's inner face sits `opening × stroke / 2` off the centre line.
 */
const G = GRIPPER_GEOMETRY;
export const GRIPPER_BODY_SIZE_M: readonly [number, number, number] = [
  2 * G.palmHalfM[0],
  2 * G.palmHalfM[1],
  2 * G.palmHalfM[2],
];
export const GRIPPER_BODY_CENTRE_Z_M = G.palmCentreZM;
export const FINGER_SIZE_M: readonly [number, number, number] = [
  2 * G.fingerHalfM[0],
  2 * G.fingerHalfM[1],
  2 * G.fingerHalfM[2],
];
/** Finger centre along the gripper's −z (flange → fingertip). */
export const FINGER_CENTRE_Z_M = G.fingerCentreZM;

/** Quaternion turning +z onto the unit direction d (half-way vector form). */
function zTo(d: readonly [number, number, number]): [number, number, number, number] {
  if (d[2] < -1 + 1e-9) return [1, 0, 0, 0];
  const q: [number, number, number, number] = [-d[1], d[0], 0, 1 + d[2]];
  const n = Math.hypot(...q);
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

/** A cylinder from a to b (link frame), radius r; empty when a and b coincide. */
function segment(a: readonly [number, number, number], b: readonly [number, number, number], r: number): ShapePart[] {
  const d: [number, number, number] = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
  const len = Math.hypot(...d);
  if (len < 1e-6) return [];
  const mid: [number, number, number] = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2];
  const joint: ShapePart = {
    shape: { type: 'cylinder', radiusM: r * 1.1, heightM: r * 1.6 },
    offset: { position: [a[0], a[1], a[2]], quaternion: zTo([d[0] / len, d[1] / len, d[2] / len]) },
  };
  return [
    {
      shape: { type: 'cylinder', radiusM: r, heightM: len },
      offset: { position: mid, quaternion: zTo([d[0] / len, d[1] / len, d[2] / len]) },
    },
    joint,
  ];
}

const IDENTITY: Pose3['quaternion'] = [0, 0, 0, 1];

/** Visual id of a rig link by its link name (without the arm prefix). */
export function linkVisualId(link: string): string {
  return `link:${link}`;
}
export const FINGER_VISUAL_ID = 'finger';

/** Looks of the rig and the cell, by visual id. */
export function rigVisuals(): Record<string, Visual> {
  const visuals: Record<string, Visual> = {};
  for (const link of LINK_NAMES) {
    const child = YAM_CHAIN.find((c) => c.parent === link);
    if (link === 'gripper' || !child) {
      const [sx, sy, sz] = GRIPPER_BODY_SIZE_M;
      visuals[linkVisualId(link)] = {
        parts: [
          {
            shape: { type: 'box', sizeM: [sx, sy, sz] },
            offset: { position: [0, 0, GRIPPER_BODY_CENTRE_Z_M], quaternion: IDENTITY },
          },
          {
            shape: { type: 'cylinder', radiusM: 0.03, heightM: 0.012 },
            offset: { position: [0, 0, 0], quaternion: IDENTITY },
          },
        ],
        color: GRIPPER_COLOR,
      };
      continue;
    }
    const r = LINK_RADIUS_M[link] ?? 0.025;
    visuals[linkVisualId(link)] = { parts: segment([0, 0, 0], child.xyz, r), color: ARM_COLOR };
  }
  visuals[FINGER_VISUAL_ID] = {
    parts: [{ shape: { type: 'box', sizeM: FINGER_SIZE_M }, offset: { position: [0, 0, 0], quaternion: IDENTITY } }],
    color: FINGER_COLOR,
  };
  return { ...visuals, ...cellVisuals() };
}

/** Finger centre offsets in the gripper frame for an opening (0 = closed … 1 = open), ±y. */
export function fingerOffsetsM(openFraction: number, strokeM: number): [number, number] {
  const open = Math.min(1, Math.max(0, openFraction));
  const half = FINGER_SIZE_M[1] / 2 + (open * strokeM) / 2;
  return [half, -half];
}
