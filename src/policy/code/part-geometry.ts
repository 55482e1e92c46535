/**
 * What `code:sort-from-tote` knows about the parts, the tote and the sorter. The policy room may
 * not read the task catalogue (src/tasks), so it keeps its own table keyed by kind id: the
 * catalogue's ISO sizes (screws: shank + head; bolts: shank + hex head; nuts and bearing rings:
 * tubes). Table frame, z up; a part's origin is the centre of its base when upright (its axis +z).
 */
import type { PrivilegedObjectState } from '../contract.js';
import { add, type Vec3 } from './frames.js';
import { quatRotate } from '../../pose/quaternion.js';

export type PartCategory = 'screw' | 'bolt' | 'nut' | 'bearing-ring';

export interface PartShape {
  readonly category: PartCategory;
  /** Width across the fingers when pinched: shank diameter (screws, bolts) or outer diameter (nuts, rings). */
  readonly widthM: number;
  /** Overall length along the axis. */
  readonly lengthM: number;
  /** Where a lying screw or bolt is pinched: distance from its tip (base) along the axis, on the shank. */
  readonly gripAlongAxisM: number;
}

const screw = (m: number, l: number): PartShape => ({
  category: 'screw',
  widthM: m / 1000,
  lengthM: (l + m) / 1000,
  gripAlongAxisM: (0.55 * l) / 1000,
});
const bolt = (m: number, l: number, head: number): PartShape => ({
  category: 'bolt',
  widthM: m / 1000,
  lengthM: (l + head) / 1000,
  gripAlongAxisM: (0.55 * l) / 1000,
});
const tube = (category: PartCategory, outer: number, h: number): PartShape => ({
  category,
  widthM: outer / 1000,
  lengthM: h / 1000,
  gripAlongAxisM: h / 2000,
});

const PARTS: Readonly<Record<string, PartShape>> = {
  'screw-m3x16': screw(3, 16),
  'screw-m4x20': screw(4, 20),
  'screw-m6x30': screw(6, 30),
  'bolt-m6x40': bolt(6, 40, 4),
  'bolt-m8x40': bolt(8, 40, 5.3),
  'bolt-m10x50': bolt(10, 50, 6.4),
  'nut-m6': tube('nut', 11, 5.2),
  'nut-m8': tube('nut', 14.4, 6.8),
  'nut-m10': tube('nut', 17.8, 8.4),
  'ring-6000': tube('bearing-ring', 26, 8),
  'ring-6200': tube('bearing-ring', 30, 9),
  'ring-6202': tube('bearing-ring', 35, 11),
};

export function partShape(kind: string): PartShape | undefined {
  return PARTS[kind];
}

/** A part as the planner sees it. */
export interface PartView {
  readonly id: string;
  readonly kind: string;
  readonly shape: PartShape;
  readonly origin: Vec3;
  /** Unit axis (base → head / top). */
  readonly axis: Vec3;
  /** Where the fingers close on it. */
  readonly gripPoint: Vec3;
  /** Its axis stands within 30° of vertical (nuts and rings lying flat; a screw on its head). */
  readonly axisVertical: boolean;
}

export function viewPart(o: PrivilegedObjectState, shape: PartShape): PartView {
  const origin = o.position as Vec3;
  const axis = quatRotate(o.quaternion as readonly [number, number, number, number], [0, 0, 1]);
  return {
    id: o.id,
    kind: o.kind,
    shape,
    origin,
    axis,
    gripPoint: add(origin, [
      axis[0] * shape.gripAlongAxisM,
      axis[1] * shape.gripAlongAxisM,
      axis[2] * shape.gripAlongAxisM,
    ]),
    axisVertical: Math.abs(axis[2]) > Math.cos(Math.PI / 6),
  };
}

/** Sorter slots from the robot's left (+y) to its right: 110 mm pitch, 100 × 110 × 60 mm trays with 4 mm walls. */
export const SORTER_SLOTS: readonly PartCategory[] = ['screw', 'bolt', 'nut', 'bearing-ring'];
const SLOT_PITCH_M = 0.11;
export const SLOT_INSIDE_HALF_M: readonly [number, number] = [0.046, 0.051];
export const SLOT_DEPTH_M = 0.06;
/** Tote: 400 × 300 × 120 mm, 5 mm walls and floor. */
export const TOTE_INSIDE_HALF_M: readonly [number, number] = [0.195, 0.145];
export const TOTE_FLOOR_Z_M = 0.005;

/** The centre of a slot's floor (table frame), from the sorter's pose. */
export function slotCentre(
  sorter: { position: Vec3; quaternion: readonly [number, number, number, number] },
  category: PartCategory,
): Vec3 {
  const i = SORTER_SLOTS.indexOf(category);
  return add(sorter.position, quatRotate(sorter.quaternion, [0, (1.5 - i) * SLOT_PITCH_M, 0.004]));
}

/** Whether a point lies inside a slot (in its footprint, below its rim). */
export function inSlot(
  sorter: { position: Vec3; quaternion: readonly [number, number, number, number] },
  category: PartCategory,
  p: Vec3,
): boolean {
  const c = slotCentre(sorter, category);
  return (
    Math.abs(p[0] - c[0]) < SLOT_INSIDE_HALF_M[0] &&
    Math.abs(p[1] - c[1]) < SLOT_INSIDE_HALF_M[1] &&
    p[2] < c[2] + SLOT_DEPTH_M
  );
}

/** Whether a point lies inside the tote (its footprint, below its rim). */
export function inTote(tote: { position: Vec3 }, p: Vec3): boolean {
  return (
    Math.abs(p[0] - tote.position[0]) < TOTE_INSIDE_HALF_M[0] &&
    Math.abs(p[1] - tote.position[1]) < TOTE_INSIDE_HALF_M[1] &&
    p[2] < 0.12
  );
}
