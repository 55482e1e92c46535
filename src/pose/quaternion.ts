/**
 * Unit quaternions (x, y, z, w) and the rotations of 3-vectors by them: the one copy of this
 * arithmetic that the task geometry, the code policies' planners and the sim all use. Pure, no
 * dependencies, and written term for term as before, so every sim's final-state hash is unchanged
 * (floating-point sums are not associative: reordering a term would change the last bits).
 */
export type Vec3 = readonly [number, number, number];
export type Quat = readonly [number, number, number, number];

/** The Hamilton product a·b: the rotation b, then a. */
export function quatMul(a: Quat, b: Quat): [number, number, number, number] {
  return [
    a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
    a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
    a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
  ];
}

/** The inverse of a unit quaternion. */
export function quatConj(q: Quat): [number, number, number, number] {
  return [-q[0], -q[1], -q[2], q[3]];
}

/** Rotates v by the unit quaternion q. */
export function quatRotate(q: Quat, v: Vec3): [number, number, number] {
  const [x, y, z, w] = q;
  // t = 2 q_vec × v; v' = v + w t + q_vec × t
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

/** A turn of yawRad about +z. */
export function quatFromYaw(yawRad: number): [number, number, number, number] {
  return [0, 0, Math.sin(yawRad / 2), Math.cos(yawRad / 2)];
}
