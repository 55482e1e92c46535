/**
 * The physics world a sim calibration names: Rapier (src/sim/scene.ts) or MuJoCo 3
 * (src/sim/mujoco). The one place that asks which engine runs; SimRig and the rollout loop see a
 * PhysicsScene either way.
 */
import { simEngineOf } from './calibration.js';
import { createMujocoScene } from './mujoco/mujoco-scene.js';
import type { PhysicsScene, SceneOptions } from './physics-scene.js';
import { createScene } from './scene.js';

export function createEngineScene(opts: SceneOptions): Promise<PhysicsScene> {
  return simEngineOf(opts.calibration) === 'mujoco' ? createMujocoScene(opts) : createScene(opts);
}
