/** The sizes of a sim arm's collision shapes, which the cameras, the keep-out zones and the code policies reuse. */
import { GRIPPER_MASS_CENTRES } from '../../rig/gravity.js';

/**
 * Gripper geometry in the gripper frame (approach −z, fingers open along ±y). Body centres are the
 * rig's gravity model's (src/rig/gravity.ts), so the arms weigh in the sim what the rigs' gravity
 * feed-forward says they weigh.
 */
export const GRIPPER_GEOMETRY = {
  palmHalfM: [0.03, 0.06, 0.04] as const,
  palmCentreZM: GRIPPER_MASS_CENTRES.palmZM,
  fingerHalfM: [0.012, GRIPPER_MASS_CENTRES.fingerHalfThicknessM, 0.03] as const,
  /** Finger centre along the approach axis; fingertips at −0.14, the pads meet around −0.12. */
  fingerCentreZM: GRIPPER_MASS_CENTRES.fingerZM,
} as const;

/** Capsule radius of each link, base_link … link5 (the gripper is boxes). */
export const LINK_RADIUS_M = [0.045, 0.04, 0.035, 0.03, 0.03, 0.03];
