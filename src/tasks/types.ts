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
}

/** How one object ended an episode: measured in sim, or entered by an operator. */
export interface ObjectEndState {
  readonly id: string;
  /** Region id it ended inside ("bin", "slot:nut", …); absent when it is in no region. */
  readonly region?: string;
  /** Whether it stands upright at the end (mugs). */
  readonly upright?: boolean;
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
  /** Scores an end state against the layout it started from. */
  scoreProgress(layout: Layout, endStates: readonly ObjectEndState[]): TaskProgress;
}

export type { Shape, ShapePart, TablePose, TableRect };
