/**
 * The object and fixture catalogue: real-world sizes, masses and friction of what the three
 * tasks handle. Masses are for the real items (a filled 0.5 l bottle, a 350 ml stoneware mug,
 * steel fasteners from DIN/ISO tables); friction is against the laminated table top.
 */
import type { ShapePart } from './geometry.js';
import type { FixtureKind, FixtureRegion, ObjectKind } from './types.js';

const IDENTITY = [0, 0, 0, 1] as const;
const at = (x: number, y: number, z: number) => ({ position: [x, y, z] as const, quaternion: IDENTITY });
/** A vertical cylinder standing on z0. */
const cyl = (radiusM: number, heightM: number, z0 = 0, x = 0, y = 0): ShapePart => ({
  shape: { type: 'cylinder', radiusM, heightM },
  offset: at(x, y, z0 + heightM / 2),
});
const box = (sx: number, sy: number, sz: number, x: number, y: number, z0: number): ShapePart => ({
  shape: { type: 'box', sizeM: [sx, sy, sz] },
  offset: at(x, y, z0 + sz / 2),
});
const tube = (outerRadiusM: number, innerRadiusM: number, heightM: number): ShapePart => ({
  shape: { type: 'tube', outerRadiusM, innerRadiusM, heightM },
  offset: at(0, 0, heightM / 2),
});
const tray = (sx: number, sy: number, sz: number, wallM: number, x = 0, y = 0): ShapePart => ({
  shape: { type: 'tray', sizeM: [sx, sy, sz], wallM },
  offset: at(x, y, sz / 2),
});
/** Rounded to a micrometre, so derived sizes read as the round numbers they are. */
const um = (v: number): number => Math.round(v * 1e6) / 1e6;
/** The volume inside a tray — above its floor, within its walls — where an object counts as in it. */
const trayInside = (
  sx: number,
  sy: number,
  sz: number,
  wallM: number,
  x = 0,
  y = 0,
): Pick<FixtureRegion, 'centerM' | 'sizeM'> => ({
  centerM: [x, y, um(wallM + (sz - wallM) / 2)],
  sizeM: [um(sx - 2 * wallM), um(sy - 2 * wallM), um(sz - wallM)],
});

// ── bottles-in-the-bin ──────────────────────────────────────────────────────────
/** A 0.5 l PET water bottle, filled: Ø65 mm, 205 mm tall. */
export const BOTTLE: ObjectKind = {
  id: 'bottle-500ml',
  name: '0.5 l bottle',
  category: 'bottle',
  parts: [cyl(0.0325, 0.165), cyl(0.0135, 0.04, 0.165)],
  massKg: 0.52,
  friction: 0.45,
  footprintRadiusM: 0.1025,
  color: [64, 150, 220],
  restingPostures: ['upright', 'lying'],
};

/** A wastepaper bin, 300 × 220 × 180 mm, light enough to be nudged into reach. */
const BIN_TRAY = [0.3, 0.22, 0.18, 0.006] as const;
export const BIN: FixtureKind = {
  id: 'bin',
  name: 'bin',
  parts: [tray(...BIN_TRAY)],
  massKg: 0.7,
  friction: 0.4,
  movable: true,
  regions: [{ id: 'bin', ...trayInside(...BIN_TRAY) }],
  color: [70, 74, 86],
  footprintHalfM: [0.15, 0.11],
};

// ── mug-flipping ────────────────────────────────────────────────────────────────
/** A 350 ml stoneware mug: Ø82 mm, 95 mm tall; the handle sticks out along its own +y. */
export const MUG: ObjectKind = {
  id: 'mug-350ml',
  name: '350 ml mug',
  category: 'mug',
  parts: [
    { shape: { type: 'cup', radiusM: 0.041, heightM: 0.095, wallM: 0.005, bottomM: 0.008 }, offset: at(0, 0, 0.0475) },
    box(0.012, 0.028, 0.065, 0, 0.055, 0.015),
  ],
  massKg: 0.32,
  friction: 0.55,
  footprintRadiusM: 0.07,
  color: [205, 92, 70],
};

// ── sort-from-tote ──────────────────────────────────────────────────────────────
// Screws: socket-head cap screws (ISO 4762), shank + cylindrical head. Bolts: hex-head (ISO 4017),
// shank + hex head approximated by a box across flats. Nuts (ISO 4032) as tubes across corners.
// Bearing rings: outer rings of deep-groove bearings (6000/6200/6202 sizes).
const STEEL_FRICTION = 0.35;
const screw = (m: number, lengthMm: number, headDiaMm: number, massG: number): ObjectKind => ({
  id: `screw-m${m}x${lengthMm}`,
  name: `M${m}×${lengthMm} screw`,
  category: 'screw',
  parts: [cyl(m / 2 / 1000, lengthMm / 1000), cyl(headDiaMm / 2000, m / 1000, lengthMm / 1000)],
  massKg: massG / 1000,
  friction: STEEL_FRICTION,
  footprintRadiusM: (lengthMm + m) / 2000,
  color: [60, 130, 200],
  restingPostures: ['lying'],
});
const bolt = (m: number, lengthMm: number, acrossFlatsMm: number, headMm: number, massG: number): ObjectKind => ({
  id: `bolt-m${m}x${lengthMm}`,
  name: `M${m}×${lengthMm} bolt`,
  category: 'bolt',
  parts: [
    cyl(m / 2 / 1000, lengthMm / 1000),
    box(acrossFlatsMm / 1000, acrossFlatsMm / 1000, headMm / 1000, 0, 0, lengthMm / 1000),
  ],
  massKg: massG / 1000,
  friction: STEEL_FRICTION,
  footprintRadiusM: (lengthMm + headMm) / 2000,
  color: [40, 160, 90],
  restingPostures: ['lying'],
});
const nut = (m: number, acrossCornersMm: number, heightMm: number, massG: number): ObjectKind => ({
  id: `nut-m${m}`,
  name: `M${m} nut`,
  category: 'nut',
  parts: [tube(acrossCornersMm / 2000, m / 2000, heightMm / 1000)],
  massKg: massG / 1000,
  friction: STEEL_FRICTION,
  footprintRadiusM: acrossCornersMm / 2000,
  color: [220, 170, 40],
  restingPostures: ['upright'],
});
const ring = (bearing: string, outerMm: number, innerMm: number, widthMm: number, massG: number): ObjectKind => ({
  id: `ring-${bearing}`,
  name: `bearing ring ${bearing}`,
  category: 'bearing-ring',
  parts: [tube(outerMm / 2000, innerMm / 2000, widthMm / 1000)],
  massKg: massG / 1000,
  friction: STEEL_FRICTION,
  footprintRadiusM: outerMm / 2000,
  color: [150, 90, 190],
  restingPostures: ['upright'],
});

export const SCREWS = [screw(3, 16, 5.5, 1.3), screw(4, 20, 7, 2.7), screw(6, 30, 10, 8.6)] as const;
export const BOLTS = [bolt(6, 40, 10, 4, 11), bolt(8, 40, 13, 5.3, 22), bolt(10, 50, 16, 6.4, 42)] as const;
export const NUTS = [nut(6, 11, 5.2, 2.5), nut(8, 14.4, 6.8, 5.1), nut(10, 17.8, 8.4, 11)] as const;
export const RINGS = [ring('6000', 26, 20, 8, 12), ring('6200', 30, 23, 9, 17), ring('6202', 35, 28, 11, 26)] as const;

/** A gray Euro tote, 400 × 300 × 120 mm, fixed in the cell. */
const TOTE_TRAY = [0.4, 0.3, 0.12, 0.005] as const;
export const TOTE: FixtureKind = {
  id: 'tote',
  name: 'gray tote',
  parts: [tray(...TOTE_TRAY)],
  massKg: 1.1,
  friction: 0.5,
  movable: false,
  regions: [{ id: 'tote', ...trayInside(...TOTE_TRAY) }],
  color: [150, 150, 150],
  footprintHalfM: [0.2, 0.15],
};

/** Sorter slot order, from the robot's left (+y) to its right (−y). */
export const SORTER_SLOT_CATEGORIES = ['screw', 'bolt', 'nut', 'bearing-ring'] as const;
const SLOT_PITCH_M = 0.11;
const slotY = (i: number): number => (1.5 - i) * SLOT_PITCH_M;
/**
 * A red sorter: four open slots in a row, 100 × 110 × 60 mm each, one per part category. The
 * rightmost slot (bearing rings) sits beyond the reach of the arm that works the tote, so filling
 * it takes a two-arm handover.
 */
export const SORTER: FixtureKind = {
  id: 'sorter',
  name: 'red sorter',
  parts: SORTER_SLOT_CATEGORIES.map((_, i) => tray(0.1, SLOT_PITCH_M, 0.06, 0.004, 0, slotY(i))),
  massKg: 1.2,
  friction: 0.5,
  movable: false,
  regions: SORTER_SLOT_CATEGORIES.map(
    (category, i): FixtureRegion => ({
      id: `slot:${category}`,
      ...trayInside(0.1, SLOT_PITCH_M, 0.06, 0.004, 0, slotY(i)),
      acceptsKind: category,
      ...(i === SORTER_SLOT_CATEGORIES.length - 1 ? { needsHandover: true } : {}),
    }),
  ),
  color: [200, 40, 40],
  footprintHalfM: [0.05, (SORTER_SLOT_CATEGORIES.length * SLOT_PITCH_M) / 2],
};

/** The category a kind counts as (its id when it has none). */
export function categoryOf(kind: ObjectKind): string {
  return kind.category ?? kind.id;
}
