/**
 * Catalogue shapes → Rapier collider descriptions. Hollow shapes (cup, tube, tray) become
 * compounds of boxes so objects can sit inside them; a part's offset places the centre of its
 * bounding box and a shape's own z is a cylinder's axis (geometry.ts), while Rapier's cylinders
 * stand on their y axis — hence the quarter turn below.
 */
import type { ColliderDesc } from '@dimforge/rapier3d-deterministic-compat';
import type { Pose3, Shape, ShapePart } from '../tasks/geometry.js';
import type { Rapier } from './rapier.js';
import { quatFromYaw, quatMul, quatRotate, type Quat, type Vec3 } from '../pose/quaternion.js';

/** Wall segments used to approximate a round hollow shape; 12 keeps a bottle from wedging between flats. */
const ROUND_WALL_SEGMENTS = 12;
/** Turns Rapier's y-up cylinder so its axis is the shape's z. */
const Y_TO_Z: Quat = [Math.SQRT1_2, 0, 0, Math.SQRT1_2];

/** One primitive in the shape's own frame (centre of its bounding box at the origin). */
interface Primitive {
  readonly kind: 'box' | 'cylinder';
  /** box: half extents; cylinder: [radius, radius, half height]. */
  readonly half: Vec3;
  readonly position: Vec3;
  readonly rotation: Quat;
}

function ring(outerR: number, innerR: number, halfH: number, zCentre: number): Primitive[] {
  const wall = outerR - innerR;
  const midR = (outerR + innerR) / 2;
  // Chord length of one segment at the outer radius, so neighbouring boxes meet without gaps.
  const halfLen = outerR * Math.tan(Math.PI / ROUND_WALL_SEGMENTS);
  const out: Primitive[] = [];
  for (let i = 0; i < ROUND_WALL_SEGMENTS; i++) {
    const a = (2 * Math.PI * i) / ROUND_WALL_SEGMENTS;
    out.push({
      kind: 'box',
      half: [wall / 2, halfLen, halfH],
      position: [midR * Math.cos(a), midR * Math.sin(a), zCentre],
      rotation: quatFromYaw(a),
    });
  }
  return out;
}

function primitives(shape: Shape): Primitive[] {
  const I: Quat = [0, 0, 0, 1];
  switch (shape.type) {
    case 'box':
      return [
        {
          kind: 'box',
          half: [shape.sizeM[0] / 2, shape.sizeM[1] / 2, shape.sizeM[2] / 2],
          position: [0, 0, 0],
          rotation: I,
        },
      ];
    case 'cylinder':
      return [
        { kind: 'cylinder', half: [shape.radiusM, shape.radiusM, shape.heightM / 2], position: [0, 0, 0], rotation: I },
      ];
    case 'cup': {
      const h = shape.heightM / 2;
      const wallH = (shape.heightM - shape.bottomM) / 2;
      return [
        {
          kind: 'cylinder',
          half: [shape.radiusM, shape.radiusM, shape.bottomM / 2],
          position: [0, 0, -h + shape.bottomM / 2],
          rotation: I,
        },
        ...ring(shape.radiusM, shape.radiusM - shape.wallM, wallH, -h + shape.bottomM + wallH),
      ];
    }
    case 'tube':
      return ring(shape.outerRadiusM, shape.innerRadiusM, shape.heightM / 2, 0);
    case 'tray': {
      const [sx, sy, sz] = shape.sizeM;
      const w = shape.wallM;
      const wallH = (sz - w) / 2;
      const zWall = -sz / 2 + w + wallH;
      return [
        { kind: 'box', half: [sx / 2, sy / 2, w / 2], position: [0, 0, -sz / 2 + w / 2], rotation: I },
        { kind: 'box', half: [w / 2, sy / 2, wallH], position: [sx / 2 - w / 2, 0, zWall], rotation: I },
        { kind: 'box', half: [w / 2, sy / 2, wallH], position: [-sx / 2 + w / 2, 0, zWall], rotation: I },
        { kind: 'box', half: [sx / 2 - w, w / 2, wallH], position: [0, sy / 2 - w / 2, zWall], rotation: I },
        { kind: 'box', half: [sx / 2 - w, w / 2, wallH], position: [0, -sy / 2 + w / 2, zWall], rotation: I },
      ];
    }
  }
}

function volume(p: Primitive): number {
  return p.kind === 'box' ? 8 * p.half[0] * p.half[1] * p.half[2] : Math.PI * p.half[0] * p.half[0] * 2 * p.half[2];
}

export interface ColliderOptions {
  /** Total mass spread over the parts by volume; omit for fixed bodies. */
  readonly massKg?: number;
  readonly friction: number;
  readonly restitution: number;
  readonly collisionGroups: number;
}

/** Collider descriptions for an owner made of `parts`, in the owner's frame. */
export function collidersForParts(R: Rapier, parts: readonly ShapePart[], opts: ColliderOptions): ColliderDesc[] {
  const placed: { p: Primitive; offset: Pose3 }[] = [];
  for (const part of parts) for (const p of primitives(part.shape)) placed.push({ p, offset: part.offset });
  const totalVolume = placed.reduce((s, x) => s + volume(x.p), 0);
  return placed.map(({ p, offset }) => {
    const desc =
      p.kind === 'box'
        ? R.ColliderDesc.cuboid(p.half[0], p.half[1], p.half[2])
        : R.ColliderDesc.cylinder(p.half[2], p.half[0]);
    const rotInPart = p.kind === 'cylinder' ? quatMul(p.rotation, Y_TO_Z) : p.rotation;
    const rot = quatMul(offset.quaternion, rotInPart);
    const pos = quatRotate(offset.quaternion, p.position);
    desc.setTranslation(pos[0] + offset.position[0], pos[1] + offset.position[1], pos[2] + offset.position[2]);
    desc.setRotation({ x: rot[0], y: rot[1], z: rot[2], w: rot[3] });
    if (opts.massKg !== undefined) desc.setMass((opts.massKg * volume(p)) / totalVolume);
    desc.setFriction(opts.friction);
    desc.setRestitution(opts.restitution);
    desc.setCollisionGroups(opts.collisionGroups);
    return desc;
  });
}

/** Rapier interaction groups: membership in the high 16 bits, filter in the low 16. */
export function interactionGroups(member: number, filter: number): number {
  return ((member & 0xffff) << 16) | (filter & 0xffff);
}

/**
 * What collides with what. An arm's links and hand collide with the table, the fixtures, the
 * objects and the other arm, never with themselves (neighbouring link capsules overlap at the
 * joints). Links and hands are separate groups so either can be told apart.
 */
export const GROUP = {
  table: 1 << 0,
  fixture: 1 << 1,
  object: 1 << 2,
  leftArm: 1 << 3,
  leftHand: 1 << 4,
  rightArm: 1 << 5,
  rightHand: 1 << 6,
} as const;
const ANY_ARM = GROUP.leftArm | GROUP.leftHand | GROUP.rightArm | GROUP.rightHand;
const WORLD = GROUP.table | GROUP.fixture | GROUP.object;
export const GROUPS = {
  table: interactionGroups(GROUP.table, GROUP.fixture | GROUP.object | ANY_ARM),
  fixture: interactionGroups(GROUP.fixture, WORLD | ANY_ARM),
  object: interactionGroups(GROUP.object, WORLD | ANY_ARM),
  armLink: {
    left: interactionGroups(GROUP.leftArm, WORLD | GROUP.rightArm | GROUP.rightHand),
    right: interactionGroups(GROUP.rightArm, WORLD | GROUP.leftArm | GROUP.leftHand),
  },
  hand: {
    left: interactionGroups(GROUP.leftHand, WORLD | GROUP.rightArm | GROUP.rightHand),
    right: interactionGroups(GROUP.rightHand, WORLD | GROUP.leftArm | GROUP.leftHand),
  },
} as const;
