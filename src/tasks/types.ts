import type { Shape, ShapePart, TablePose, TableRect } from './geometry.js';

export type TaskId = 'bottles-in-the-bin' | 'mug-flipping' | 'sort-from-tote';
export const TASK_IDS: readonly TaskId[] = ['bottles-in-the-bin', 'mug-flipping', 'sort-from-tote'];

/** How an object rests when placed: upright on its base, lying on its side, or upside down. */
export type Posture = 'upright' | 'lying' | 'upside-down';

/** A kind of manipulated object in the catalogue (a 0.5 l bottle, a mug, an M8 bolt …). */
export interface ObjectKind {
  readonly id: string;
  readonly name: string;
  /** Geometry in the object's own frame with the object upright, its base centred at the origin. */
  readonly parts: readonly ShapePart[];
  readonly massKg: number;
  /** Coulomb friction coefficient against the table. */
  readonly friction: number;
  /** Radius of the object's footprint disc used for clearance when sampling, any posture. */
  readonly footprintRadiusM: number;
  /** Display colour, RGB 0–255. */
  readonly color: readonly [number, number, number];
  /**
   * The family a sized kind belongs to ("screw" for an M4×20 screw). Sorter slots accept a
   * category; objects without one are their own category (their id). Ids in a layout are
   * numbered per category ("screw-3").
   */
  readonly category?: string;
  /** Postures this kind can rest in on its own (a screw lies, a nut lies flat = upright); default all. */
  readonly restingPostures?: readonly Posture[];
}

/** A named volume inside a fixture where objects count as "in" it (the bin's inside, one sorter slot). */
export interface FixtureRegion {
  readonly id: string;
  /** Box in the fixture's frame: centre and full size. */
  readonly centerM: readonly [number, number, number];
  readonly sizeM: readonly [number, number, number];
  /** For a sorter slot: the object kind that belongs there. */
  readonly acceptsKind?: string;
  /** True when only a two-arm handover reaches this region (the sorter's rightmost slot). */
  readonly needsHandover?: boolean;
}

/** A fixture: bin, tote, sorter. Fixed fixtures are part of the cell; movable ones may be nudged. */
export interface FixtureKind {
  readonly id: string;
  readonly name: string;
  readonly parts: readonly ShapePart[];
  readonly massKg: number;
  readonly friction: number;
  readonly movable: boolean;
  readonly regions: readonly FixtureRegion[];
  readonly color: readonly [number, number, number];
  /** Half-extents of the fixture's footprint rectangle in its own frame (for clearance and drawing). */
  readonly footprintHalfM: readonly [number, number];
}

/** One placed object in a layout record. */
export interface LayoutObject {
  /** Stable id within the layout, e.g. "bottle-1". Operators see it on the projector and in scoring. */
  readonly id: string;
  readonly kind: string;
  readonly pose: TablePose;
  readonly posture: Posture;
  /** Set when the object starts inside a fixture (parts in the tote): that fixture's id. */
  readonly inFixture?: string;
}

export interface LayoutFixture {
  readonly id: string;
  readonly kind: string;
  readonly pose: TablePose;
}

/** One frozen initial condition: what the operator places and what the sim instantiates. */
export interface Layout {
  /** Index within its layout set, 0-based. */
  readonly index: number;
  readonly tier: number;
  readonly fixtures: readonly LayoutFixture[];
  readonly objects: readonly LayoutObject[];
}

/** What a tier asks for; each task interprets its own fields. */
export interface TierSpec {
  readonly tier: number;
  readonly description: string;
  readonly minObjects: number;
  readonly maxObjects: number;
  /** How the layout sampler draws this tier. */
  readonly draw: TierDraw;
}

/** The sampler's recipe for one tier: which kinds, which postures, where, how crowded. */
export interface TierDraw {
  /** Object kinds drawn uniformly, one draw per object. */
  readonly kinds: readonly string[];
  /** Postures drawn uniformly for objects whose posture is not forced below. */
  readonly postures: readonly Posture[];
  /** Inclusive range of objects placed upside down (mugs needing a handover); default none forced. */
  readonly upsideDown?: readonly [number, number];
  /** At least this many objects start not upright (mug-flipping needs one to have a score). */
  readonly minNotUpright?: number;
  /** Objects start inside this fixture's region (parts in the tote) instead of on the table. */
  readonly inFixture?: string;
  /** Fixtures are posed anywhere in their placement region (else at its centre, middle yaw). */
  readonly fixturesVary: boolean;
}

/** Where a fixture of a task stands: a region for its centre and a yaw range. */
export interface FixturePlacement {
  /** Fixture id in layouts ("bin", "tote", "sorter"). */
  readonly id: string;
  readonly kind: string;
  /** Centre drawn uniformly in this rectangle (a fixed fixture has a zero-size one). */
  readonly region: TableRect;
  readonly yawRangeRad: readonly [number, number];
}

/** How far apart the sampler keeps things, metres. */
export interface TaskClearances {
  /** Between two objects' footprints on the table. */
  readonly objectM: number;
  /** Between an object on the table and a fixture. */
  readonly fixtureM: number;
  /** Between two objects inside a fixture (parts in the tote). */
  readonly inFixtureObjectM: number;
  /** Between an object inside a fixture and the fixture region's edge. */
  readonly inFixtureWallM: number;
}

/** How one object ended an episode: measured in sim, or entered by an operator. */
export interface ObjectEndState {
  readonly id: string;
  /** Region id it ended inside ("bin", "slot:nut", …); absent when it is in no region. */
  readonly region?: string;
  /** Whether it stands upright at the end (mugs). */
  readonly upright?: boolean;
  /** Set when it fell off the table or left the scene (a policy failure; it is then in no region). */
  readonly offTable?: boolean;
}

/** Task progress in [0, 1] with the raw counts it came from, kept side by side. */
export interface TaskProgress {
  readonly progress: number;
  readonly counts: Readonly<Record<string, number>>;
  /** The counts in words, e.g. "3 of 4 bottles in the bin". */
  readonly summary: string;
}

export interface TaskDefinition {
  readonly id: TaskId;
  readonly name: string;
  /** The language instruction given to VLA policies. */
  readonly prompt: string;
  /** Fixed episode length, the same in sim and real. */
  readonly episodeSeconds: number;
  readonly tiers: readonly TierSpec[];
  /** Where objects may be placed, table frame. */
  readonly workspace: TableRect;
  readonly objectKinds: readonly ObjectKind[];
  readonly fixtureKinds: readonly FixtureKind[];
  /** The fixtures every layout of this task has, and where they may stand. */
  readonly fixtures: readonly FixturePlacement[];
  readonly clearances: TaskClearances;
  /** Region ids an object can end in (end states name one of these, or none). */
  readonly regionIds: readonly string[];
  /**
   * Scores an end state against the layout it started from. Throws TaskInputError when the end
   * state names an unknown object or region, misses an object, or the layout cannot be scored.
   */
  scoreProgress(layout: Layout, endStates: readonly ObjectEndState[]): TaskProgress;
  /**
   * How many objects progress counts in a layout (progress = done / this): bottles and parts all
   * count, mugs only those that start not upright. Task events turn progress into a done count
   * with it, so a per-step reward moves in whole objects.
   */
  progressUnits(layout: Layout): number;
}

export type { Shape, ShapePart, TablePose, TableRect };
