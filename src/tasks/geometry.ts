/**
 * Shapes and poses shared by tasks, layouts, the sim twin and the projector.
 *
 * Frame: the **table frame**. Origin at the centre of the table's top surface, z up,
 * x pointing away from the arm bases across the table, y to the robot's left.
 * Lengths in metres, angles in radians, masses in kilograms.
 */

/** A pose on the table plane. */
export interface TablePose {
  readonly x: number;
  readonly y: number;
  readonly yawRad: number;
}

/** A full 3D pose: position in metres and a unit quaternion (x, y, z, w). */
export interface Pose3 {
  readonly position: readonly [number, number, number];
  readonly quaternion: readonly [number, number, number, number];
}

/** An axis-aligned rectangle on the table plane. */
export interface TableRect {
  readonly xMin: number;
  readonly xMax: number;
  readonly yMin: number;
  readonly yMax: number;
}

export type Shape =
  | { readonly type: 'cylinder'; readonly radiusM: number; readonly heightM: number }
  | { readonly type: 'box'; readonly sizeM: readonly [number, number, number] }
  /** Open-top hollow cylinder (a mug body; the handle is a `box` part). */
  | {
      readonly type: 'cup';
      readonly radiusM: number;
      readonly heightM: number;
      readonly wallM: number;
      readonly bottomM: number;
    }
  /** Hollow cylinder open at both ends (bearing ring; a nut is approximated by one). */
  | { readonly type: 'tube'; readonly outerRadiusM: number; readonly innerRadiusM: number; readonly heightM: number }
  /** Open-top box with walls and a floor (bin, tote, one sorter slot). sizeM is the outer size. */
  | { readonly type: 'tray'; readonly sizeM: readonly [number, number, number]; readonly wallM: number };

/** A shape placed relative to its owner's origin (owner origin sits on the table, z = 0 at its bottom). */
export interface ShapePart {
  readonly shape: Shape;
  /** Places the centre of the shape's bounding box; the shape's own z is a cylinder's axis. */
  readonly offset: Pose3;
}
