/**
 * Where an object or fixture touches the table: oriented rectangles in the table frame, and the
 * 3D pose a posture implies. The sampler keeps footprints apart, the projector draws them
 * (footprints on the table plane, not tops, to avoid parallax) and the sim instantiates the poses.
 *
 * Posture convention for an object whose layout pose is (x, y, yaw):
 * - upright: its base on the table, centred at (x, y); its own +x axis points along yaw.
 * - upside-down: turned half a circle about its own x axis, so its top rests on the table.
 * - lying: turned a quarter circle about its own y axis, so its axis (own +z, base → top)
 *   points along yaw; (x, y) is under the middle of the axis. Own +y (a mug's handle side)
 *   stays horizontal, so nothing sticks into the table.
 */
import { quatFromYaw, quatMul, quatRotate } from '../pose/quaternion.js';
import type { Pose3, ShapePart, TablePose, TableRect } from './geometry.js';
import type { FixtureKind, ObjectKind, Posture } from './types.js';

/** A rectangle on the table: centre, half extents along its own axes, and its yaw. */
export interface OrientedRect {
  readonly cx: number;
  readonly cy: number;
  readonly halfX: number;
  readonly halfY: number;
  readonly yawRad: number;
}

/** Axis-aligned bounds of an owner's geometry in its own frame (upright), metres. */
export interface Bounds3 {
  readonly min: readonly [number, number, number];
  readonly max: readonly [number, number, number];
}

function partHalfExtents(part: ShapePart): [number, number, number] {
  const s = part.shape;
  switch (s.type) {
    case 'cylinder':
    case 'cup':
      return [s.radiusM, s.radiusM, s.heightM / 2];
    case 'tube':
      return [s.outerRadiusM, s.outerRadiusM, s.heightM / 2];
    case 'box':
    case 'tray':
      return [s.sizeM[0] / 2, s.sizeM[1] / 2, s.sizeM[2] / 2];
  }
}

/**
 * Bounds of a set of parts. Each part's offset places the centre of the shape's bounding box
 * (the shape's own z axis is a cylinder's axis); rotated parts are bounded by their rotated box.
 */
export function partsBounds(parts: readonly ShapePart[]): Bounds3 {
  const min: [number, number, number] = [Infinity, Infinity, Infinity];
  const max: [number, number, number] = [-Infinity, -Infinity, -Infinity];
  for (const part of parts) {
    const h = partHalfExtents(part);
    for (const sx of [-1, 1]) {
      for (const sy of [-1, 1]) {
        for (const sz of [-1, 1]) {
          const c = quatRotate(part.offset.quaternion, [sx * h[0], sy * h[1], sz * h[2]]);
          for (let i = 0; i < 3; i++) {
            const v = c[i] + part.offset.position[i];
            if (v < min[i]) min[i] = v;
            if (v > max[i]) max[i] = v;
          }
        }
      }
    }
  }
  return { min, max };
}

/** Height of an object standing upright, metres. */
export function objectHeightM(kind: ObjectKind): number {
  return partsBounds(kind.parts).max[2];
}

/** The object's footprint on the table in the given posture and pose. */
export function objectFootprint(kind: ObjectKind, posture: Posture, pose: TablePose): OrientedRect {
  const b = partsBounds(kind.parts);
  let x0: number;
  let x1: number;
  let y0: number;
  let y1: number;
  if (posture === 'lying') {
    const h = b.max[2];
    [x0, x1, y0, y1] = [-h / 2, h / 2, b.min[1], b.max[1]];
  } else if (posture === 'upside-down') {
    [x0, x1, y0, y1] = [b.min[0], b.max[0], -b.max[1], -b.min[1]];
  } else {
    [x0, x1, y0, y1] = [b.min[0], b.max[0], b.min[1], b.max[1]];
  }
  const mx = (x0 + x1) / 2;
  const my = (y0 + y1) / 2;
  const c = Math.cos(pose.yawRad);
  const s = Math.sin(pose.yawRad);
  return {
    cx: pose.x + c * mx - s * my,
    cy: pose.y + s * mx + c * my,
    halfX: (x1 - x0) / 2,
    halfY: (y1 - y0) / 2,
    yawRad: pose.yawRad,
  };
}

/** A fixture's footprint: its footprint rectangle centred on its pose. */
export function fixtureFootprint(kind: FixtureKind, pose: TablePose): OrientedRect {
  return { cx: pose.x, cy: pose.y, halfX: kind.footprintHalfM[0], halfY: kind.footprintHalfM[1], yawRad: pose.yawRad };
}

/**
 * The 3D pose of an object's own origin (centre of its base, upright frame) for a layout pose and
 * posture, resting on the table (z = 0). What the sim instantiates.
 */
export function objectPose3(kind: ObjectKind, posture: Posture, pose: TablePose): Pose3 {
  const b = partsBounds(kind.parts);
  const yawQ = quatFromYaw(pose.yawRad);
  if (posture === 'upside-down') {
    return { position: [pose.x, pose.y, b.max[2]], quaternion: quatMul(yawQ, [1, 0, 0, 0]) };
  }
  if (posture === 'lying') {
    const h = b.max[2];
    const r = Math.SQRT1_2;
    // After the quarter turn about own y, own +x points down: the body rests at height max x.
    return {
      position: [pose.x - Math.cos(pose.yawRad) * (h / 2), pose.y - Math.sin(pose.yawRad) * (h / 2), b.max[0]],
      quaternion: quatMul(yawQ, [0, r, 0, r]),
    };
  }
  return { position: [pose.x, pose.y, 0], quaternion: yawQ };
}

/** The four corners of a rectangle, counter-clockwise. */
export function rectCorners(r: OrientedRect): [number, number][] {
  const c = Math.cos(r.yawRad);
  const s = Math.sin(r.yawRad);
  return [
    [-1, -1],
    [1, -1],
    [1, 1],
    [-1, 1],
  ].map(([sx, sy]) => [r.cx + c * sx * r.halfX - s * sy * r.halfY, r.cy + s * sx * r.halfX + c * sy * r.halfY]);
}

/** True when the rectangles come closer than clearanceM (separating-axis test on inflated boxes). */
export function rectsOverlap(a: OrientedRect, b: OrientedRect, clearanceM = 0): boolean {
  const ai = { ...a, halfX: a.halfX + clearanceM, halfY: a.halfY + clearanceM };
  const ca = rectCorners(ai);
  const cb = rectCorners(b);
  for (const r of [ai, b]) {
    for (const yaw of [r.yawRad, r.yawRad + Math.PI / 2]) {
      const ux = Math.cos(yaw);
      const uy = Math.sin(yaw);
      const pa = ca.map(([x, y]) => x * ux + y * uy);
      const pb = cb.map(([x, y]) => x * ux + y * uy);
      if (Math.max(...pa) <= Math.min(...pb) || Math.max(...pb) <= Math.min(...pa)) return false;
    }
  }
  return true;
}

/** True when every corner of r lies inside the axis-aligned rectangle, kept marginM from its edges. */
export function rectInside(r: OrientedRect, area: TableRect, marginM = 0): boolean {
  return rectCorners(r).every(
    ([x, y]) =>
      x >= area.xMin + marginM && x <= area.xMax - marginM && y >= area.yMin + marginM && y <= area.yMax - marginM,
  );
}

/** A point of the table frame expressed in a fixture's frame (posed at `pose`). */
export function toFixtureFrame(pose: TablePose, x: number, y: number): [number, number] {
  const c = Math.cos(pose.yawRad);
  const s = Math.sin(pose.yawRad);
  const dx = x - pose.x;
  const dy = y - pose.y;
  return [c * dx + s * dy, -s * dx + c * dy];
}

/** Each part's own footprint (a mug's body and its handle, a bolt's shank and head), for drawing. */
export function partFootprints(kind: ObjectKind, posture: Posture, pose: TablePose): OrientedRect[] {
  const h = partsBounds(kind.parts).max[2];
  return kind.parts.map((part) => {
    const b = partsBounds([part]);
    let x0: number;
    let x1: number;
    let y0: number;
    let y1: number;
    if (posture === 'lying') [x0, x1, y0, y1] = [b.min[2] - h / 2, b.max[2] - h / 2, b.min[1], b.max[1]];
    else if (posture === 'upside-down') [x0, x1, y0, y1] = [b.min[0], b.max[0], -b.max[1], -b.min[1]];
    else [x0, x1, y0, y1] = [b.min[0], b.max[0], b.min[1], b.max[1]];
    const mx = (x0 + x1) / 2;
    const my = (y0 + y1) / 2;
    const c = Math.cos(pose.yawRad);
    const s = Math.sin(pose.yawRad);
    return {
      cx: pose.x + c * mx - s * my,
      cy: pose.y + s * mx + c * my,
      halfX: (x1 - x0) / 2,
      halfY: (y1 - y0) / 2,
      yawRad: pose.yawRad,
    };
  });
}
