/**
 * Simple shapes for each YAM link, in the link's own frame: one box per link spanning from the
 * link origin to the next joint, plus the gripper body and its two fingers. Used for URDF
 * collision/visual geometry and inertias, and available to renderers.
 *
 * The public I2RT release ships meshes we do not vendor; these boxes are an approximation of the
 * envelope (thickness LINK_THICKNESS_M), good for collision checks and a recognisable 3D view,
 * not for contact-accurate grasp simulation. Finger placement is likewise an approximation from
 * the linear gripper's stroke (0.096 m for both fingers) — measure the real gripper before trusting
 * fingertip positions to the millimetre.
 */
import { YAM_CHAIN, YAM_FINGER_MASS_KG, YAM_LINK_MASS_KG } from './yam.js';

export interface LinkBox {
  readonly link: string;
  /** Box centre in the link frame, metres. */
  readonly centerM: readonly [number, number, number];
  /** Full edge lengths along the link frame's x, y, z, metres. */
  readonly sizeM: readonly [number, number, number];
  readonly massKg: number;
}

export const LINK_THICKNESS_M = 0.05;

/** Gripper body: from the flange 0.08 m along −z (the approach axis). */
export const GRIPPER_BODY: {
  readonly centerM: readonly [number, number, number];
  readonly sizeM: readonly [number, number, number];
} = {
  centerM: [0, 0, -0.04],
  sizeM: [0.05, 0.11, 0.08],
};
/** Fingers slide along ±y of the gripper frame; each finger's origin at the closed position. */
export const FINGER_ORIGIN_Z_M = -0.08;
export const FINGER_SIZE_M: readonly [number, number, number] = [0.02, 0.01, 0.05];
/** Each finger's travel from closed (touching) to open: half the 0.096 m stroke. */
export const FINGER_TRAVEL_M = 0.048;
/** Fingertip centre in the gripper frame (both fingers' tips midway) — a sensible IK tool point. */
export const FINGERTIP_CENTER_M: readonly [number, number, number] = [0, 0, FINGER_ORIGIN_Z_M - FINGER_SIZE_M[2] / 2];

/** Box of a link spanning its origin and the next joint's origin (with the base a block under joint 1). */
export function linkBoxes(): LinkBox[] {
  const boxes: LinkBox[] = [];
  const parents = ['base_link', ...YAM_CHAIN.slice(1).map((c) => c.parent)];
  parents.forEach((link, i) => {
    const next = YAM_CHAIN[i].xyz;
    const center = next.map((v) => v / 2) as [number, number, number];
    const size = next.map((v) => Math.abs(v) + LINK_THICKNESS_M) as [number, number, number];
    boxes.push({ link, centerM: center, sizeM: size, massKg: YAM_LINK_MASS_KG[link] });
  });
  boxes.push({
    link: 'gripper',
    centerM: GRIPPER_BODY.centerM,
    sizeM: GRIPPER_BODY.sizeM,
    massKg: YAM_LINK_MASS_KG.gripper,
  });
  return boxes;
}

/** Solid-box principal inertia about its centre: [Ixx, Iyy, Izz], kg·m². */
export function boxInertia(massKg: number, sizeM: readonly [number, number, number]): [number, number, number] {
  const [x, y, z] = sizeM;
  return [(massKg * (y * y + z * z)) / 12, (massKg * (x * x + z * z)) / 12, (massKg * (x * x + y * y)) / 12];
}

export const FINGER_MASS_KG = YAM_FINGER_MASS_KG;
