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
