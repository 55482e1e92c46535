/**
 * The looks of the cell and of a task's catalogue, and the bodies of a layout as the operator
 * places it: what every 3D drawing of the table shares (sim cameras, cell cameras, the UI).
 */
import type { Pose3 } from '../tasks/geometry.js';
import { quatFromYaw } from '../pose/quaternion.js';
import { objectPose3 } from '../tasks/footprint.js';
import { TABLE_SIZE_M } from '../tasks/station.js';
import type { FixtureKind, Layout, ObjectKind, TaskId } from '../tasks/types.js';
import type { SceneBody, Visual } from './visual.js';

export const TABLE_VISUAL_ID = 'table';
export const FLOOR_VISUAL_ID = 'floor';
/** The floor's body key in every scene drawn from cellBodies(). */
export const FLOOR_BODY_KEY = 'cell:floor';
export const objectVisualId = (kind: string): string => `object:${kind}`;
export const fixtureVisualId = (kind: string): string => `fixture:${kind}`;

const IDENTITY: Pose3['quaternion'] = [0, 0, 0, 1];
const ORIGIN: Pose3 = { position: [0, 0, 0], quaternion: IDENTITY };

/** The catalogue part of a task; a TaskDefinition fits as it is. */
export interface SceneTask {
  readonly id: TaskId;
  readonly objectKinds: readonly ObjectKind[];
  readonly fixtureKinds: readonly FixtureKind[];
}

/** The table top (its surface at z = 0) and the floor under it, by visual id. */
export function cellVisuals(): Record<string, Visual> {
  const [tx, ty] = TABLE_SIZE_M;
  return {
    [TABLE_VISUAL_ID]: {
      parts: [
        { shape: { type: 'box', sizeM: [tx, ty, 0.03] }, offset: { position: [0, 0, -0.015], quaternion: IDENTITY } },
      ],
      color: [214, 206, 190],
    },
    [FLOOR_VISUAL_ID]: {
      parts: [
        { shape: { type: 'box', sizeM: [8, 8, 0.02] }, offset: { position: [0, 0, -0.76], quaternion: IDENTITY } },
      ],
      color: [120, 122, 128],
    },
  };
}

/** The cell's fixed bodies: the floor and the table. */
export function cellBodies(): SceneBody[] {
  return [
    { key: FLOOR_BODY_KEY, visual: FLOOR_VISUAL_ID, pose: ORIGIN },
    { key: 'cell:table', visual: TABLE_VISUAL_ID, pose: ORIGIN },
  ];
}

/** Every object and fixture look of a task, by visual id. */
export function catalogueVisuals(task: SceneTask): Record<string, Visual> {
  const visuals: Record<string, Visual> = {};
  for (const k of task.objectKinds) visuals[objectVisualId(k.id)] = { parts: k.parts, color: k.color };
  for (const k of task.fixtureKinds) visuals[fixtureVisualId(k.id)] = { parts: k.parts, color: k.color };
  return visuals;
}

/**
 * A layout's fixtures and objects where the operator places them (objects resting on the table
 * in their posture; one that starts inside a fixture drawn at table height, a preview's licence).
 * Throws on a kind the task does not define.
 */
export function layoutBodies(task: SceneTask, layout: Layout): SceneBody[] {
  const bodies: SceneBody[] = [];
  for (const f of layout.fixtures) {
    if (!task.fixtureKinds.some((k) => k.id === f.kind))
      throw new Error(`Fixture "${f.id}" is of kind "${f.kind}", which task ${task.id} does not define.`);
    bodies.push({
      key: `fixture:${f.id}`,
      visual: fixtureVisualId(f.kind),
      pose: { position: [f.pose.x, f.pose.y, 0], quaternion: quatFromYaw(f.pose.yawRad) },
    });
  }
  for (const o of layout.objects) {
    const kind = task.objectKinds.find((k) => k.id === o.kind);
    if (!kind) throw new Error(`Object "${o.id}" is of kind "${o.kind}", which task ${task.id} does not define.`);
    bodies.push({ key: `object:${o.id}`, visual: objectVisualId(o.kind), pose: objectPose3(kind, o.posture, o.pose) });
  }
  return bodies;
}
