/**
 * When the render page may leave out the floor's underside (page-main.ts). SwiftShader shades every
 * fragment before its depth test, so the underside — 2 cm under the floor top, across most of
 * every image — cost ≈15% of the GPU process's CPU for pixels that always lose.
 *
 * Why leaving it out changes no pixel: the depth test keeps the last of the nearest fragments, so
 * removing fragments that are never the nearest changes nothing. With every camera above the floor
 * top (by more than its near plane) and well inside its edges, the ray through any pixel where the
 * underside would be drawn first passes through the floor top, inside it and 2 cm nearer; if that
 * point is beyond the far plane, so is the underside's. So the underside is never the nearest.
 * Pure math, no three.js: tested in Node.
 */
import type { PageCamera } from './page-protocol.js';

/** An axis-aligned box in the table frame, metres. */
export interface Box3Like {
  readonly min: { readonly x: number; readonly y: number; readonly z: number };
  readonly max: { readonly x: number; readonly y: number; readonly z: number };
}

/** How far inside the floor's edges every camera must stand (the argument needs some margin). */
const INSIDE_M = 1;

/** The near plane distance of a glProjectionMatrix (column-major): P[14] / (P[10] − 1) = n. */
export function projectionNearM(projection: readonly number[]): number {
  return projection[14] / (projection[10] - 1);
}

/** True when no camera can see the floor's underside (`floor` is the floor box's world bounds). */
export function floorUndersideHidden(floor: Box3Like, cameras: readonly PageCamera[]): boolean {
  return cameras.every((c) => {
    const [x, y, z] = c.pose.position;
    return (
      z - floor.max.z > projectionNearM(c.projection) &&
      x > floor.min.x + INSIDE_M &&
      x < floor.max.x - INSIDE_M &&
      y > floor.min.y + INSIDE_M &&
      y < floor.max.y - INSIDE_M
    );
  });
}
