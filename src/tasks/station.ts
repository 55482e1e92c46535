/**
 * The station's fixed geometry in the table frame (see geometry.ts): the table, where the two
 * YAM bases stand, and how far an arm reaches. One source of truth — the rig model
 * (src/rig/yam.ts), the layout sampler and the projector all read it from here.
 */
import type { TableRect } from './geometry.js';

/** The two arms, named from the robot's point of view (it faces +x, so its left is +y). */
export type StationArm = 'left' | 'right';
export const STATION_ARMS: readonly StationArm[] = ['left', 'right'];

/** Table top: 1.0 m deep (x) × 1.2 m wide (y), origin at its centre. */
export const TABLE_SIZE_M: readonly [number, number] = [1.0, 1.2];
export const TABLE_RECT: TableRect = { xMin: -0.5, xMax: 0.5, yMin: -0.6, yMax: 0.6 };

/** Arm base positions on the table's near edge, 0.6 m apart. */
export const ARM_BASE_XY_M: Readonly<Record<StationArm, readonly [number, number]>> = {
  left: [-0.4, 0.3],
  right: [-0.4, -0.3],
};
/** Half the side of the square each arm base occupies on the table (nothing is placed on it). */
export const ARM_BASE_HALF_M = 0.06;
/** Both bases face +x, across the table. */
export const ARM_BASE_YAW_RAD = 0;

/**
 * Where each arm is at its home/start pose (all joints zero), on the table plane: no object is
 * placed there, or the first motion drags it (the bin's old home put the right fingertips 0.17 m up
 * inside its near wall). Derived once from the home FK (src/rig/kinematics.ts on the chain in
 * yam.ts) and the sim's gripper geometry (src/sim/arm/geometry.ts): the arm folds back over its base
 * with the gripper pointing +x, its frame 0.111 m in front of the base axis and 0.174 m up; the
 * fingertips reach 0.251 m in front of the base and span ±0.06 m in y when fully open; the links
 * (radius ≤ 0.045 m) span ±0.08 m in y and fold 0.29 m behind the base, past the near edge. With
 * 0.02 m margin: from the near table edge to 0.27 m in front of the base, ±0.10 m across.
 * test/tasks/station-keep-out.test.ts recomputes the FK extent and fails if this stops covering it.
 */
export const ARM_HOME_FORWARD_M = 0.27;
export const ARM_HOME_HALF_WIDTH_M = 0.1;
/**
 * More than ARM_HOME_RAISED_FROM_M ahead of the base axis (the shoulder housing, radius 0.045 m,
 * reaches 0.065 m ahead at 0.07–0.11 m height) all the arm has at home is raised: forearm, palm and fingers are ≥ 0.144 m above the table (FK, same
 * test). A fixture no taller than ARM_HOME_CLEAR_HEIGHT_M (0.024 m under the fingers) fits under
 * that part and may stand there — the tote (0.12 m) does; behind it the links reach down, so
 * the rest of the keep-out is full height. Objects never enter any of it: the arm's first move
 * descends through that space towards them.
 */
export const ARM_HOME_CLEAR_HEIGHT_M = 0.12;
export const ARM_HOME_RAISED_FROM_M = 0.08;
/** The full-height part of each keep-out: from the near edge to ARM_HOME_RAISED_FROM_M ahead of the base. */
export const ARM_HOME_KEEP_OUT_LOW: Readonly<Record<StationArm, TableRect>> = {
  left: { ...homeKeepOut('left'), xMax: ARM_BASE_XY_M.left[0] + ARM_HOME_RAISED_FROM_M },
  right: { ...homeKeepOut('right'), xMax: ARM_BASE_XY_M.right[0] + ARM_HOME_RAISED_FROM_M },
};
export const ARM_HOME_KEEP_OUT: Readonly<Record<StationArm, TableRect>> = {
  left: homeKeepOut('left'),
  right: homeKeepOut('right'),
};

function homeKeepOut(arm: StationArm): TableRect {
  const [bx, by] = ARM_BASE_XY_M[arm];
  return {
    xMin: TABLE_RECT.xMin,
    xMax: bx + ARM_HOME_FORWARD_M,
    yMin: by - ARM_HOME_HALF_WIDTH_M,
    yMax: by + ARM_HOME_HALF_WIDTH_M,
  };
}

/**
 * Horizontal reach of a YAM from its base axis. The chain (yam.ts) is 0.264 + 0.245 m of upper
 * and fore arm plus a ≈0.11 m wrist and gripper; 0.55 m leaves margin for grasping from above
 * rather than at full stretch. Closer than 0.12 m the arm folds into its own base.
 */
export const ARM_REACH_MAX_M = 0.55;
export const ARM_REACH_MIN_M = 0.12;

/** The arms whose reach annulus contains the table point (x, y). */
export function armsReaching(x: number, y: number): StationArm[] {
  return STATION_ARMS.filter((arm) => {
    const [bx, by] = ARM_BASE_XY_M[arm];
    const d = Math.hypot(x - bx, y - by);
    return d >= ARM_REACH_MIN_M && d <= ARM_REACH_MAX_M;
  });
}
