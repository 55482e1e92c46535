/**
 * The scene as plain data: looks (a rigid body's parts and colour) and placed bodies (which look,
 * where). The sim cameras, the emulated cell's cameras and the station UI's 3D view all describe
 * what they draw this way and hand it to table-scene.ts. Pure: no Node built-ins, no three.js.
 */
import type { Pose3, ShapePart } from '../tasks/geometry.js';

/** A look: the parts of one rigid body in its own frame, and their colour (RGB 0–255). */
export interface Visual {
  readonly parts: readonly ShapePart[];
  readonly color: readonly [number, number, number];
}

/** One drawn rigid body: a stable key (changes only when the body does) and which visual it uses. */
export interface SceneBody {
  readonly key: string;
  readonly visual: string;
  readonly pose: Pose3;
}
