/**
 * Turns between a sim arm's bodies and its links' kinematic frames. On the impulse arm a body's
 * frame is its link's (the turn is the identity), and these helpers then return the operand itself,
 * so its numbers stay bit-for-bit what they were before multibody arms existed (an identity product
 * can still flip the sign of a zero).
 */
import { quatMul, quatRotate, type Quat, type Vec3 } from '../../pose/quaternion.js';

/** a·b, or the other operand when one is the identity. */
export function turn(a: Quat, b: Quat): Quat {
  if (isIdentity(b)) return a;
  if (isIdentity(a)) return b;
  return quatMul(a, b);
}

/** q·v, or v itself when q is the identity. */
export function rotate(q: Quat, v: Vec3): [number, number, number] {
  return isIdentity(q) ? [v[0], v[1], v[2]] : quatRotate(q, v);
}

function isIdentity(q: Quat): boolean {
  return q[3] === 1 && q[0] === 0 && q[1] === 0 && q[2] === 0;
}

export function quatObj(q: Quat): { x: number; y: number; z: number; w: number } {
  return { x: q[0], y: q[1], z: q[2], w: q[3] };
}

export function xyz(v: { x: number; y: number; z: number }): [number, number, number] {
  return [v.x, v.y, v.z];
}

/** Shortest rotation taking +y to the unit vector d. */
export function quatBetweenY(d: Vec3): Quat {
  return quatBetween([0, 1, 0], d);
}

/** Shortest rotation taking +x to the unit vector d. */
export function quatBetweenX(d: Vec3): Quat {
  return quatBetween([1, 0, 0], d);
}

function quatBetween(a: Vec3, b: Vec3): Quat {
  const d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  if (d < -0.999999) {
    // Opposite: half a turn about any axis perpendicular to a.
    const p = Math.abs(a[0]) < 0.9 ? [0, -a[2], a[1]] : [-a[2], 0, a[0]];
    const n = Math.hypot(p[0], p[1], p[2]);
    return [p[0] / n, p[1] / n, p[2] / n, 0];
  }
  const c: [number, number, number] = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const w = 1 + d;
  const n = Math.hypot(c[0], c[1], c[2], w);
  return [c[0] / n, c[1] / n, c[2] / n, w / n];
}
