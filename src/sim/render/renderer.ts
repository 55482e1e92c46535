/**
 * The sim cameras' contract: draw the listed cameras for one scene snapshot. The rollout asks
 * only when a policy wants images, so a renderer must cost nothing until its first image.
 */
import type { CameraName, RgbImage } from '../../policy/contract.js';
import type { HashedCameraCalibration } from './camera-calibration.js';
import type { SceneSnapshot } from './scene-snapshot.js';
import type { SceneLook } from './scene-look.js';

export interface Renderer {
  /** The camera model every image comes from (record its hash with the rollout). */
  readonly calibration: HashedCameraCalibration;
  /**
   * Draws every listed camera from the same snapshot (one batch). Same snapshot and calibration →
   * the same bytes. An empty list returns {} without starting anything. A look (a rollout's
   * randomized camera poses, light and colours) changes the picture only, never the snapshot.
   */
  render(
    snapshot: SceneSnapshot,
    cameras: readonly CameraName[],
    look?: SceneLook,
  ): Promise<Partial<Record<CameraName, RgbImage>>>;
  /** Releases everything the renderer started; a later render starts again. */
  close(): Promise<void>;
}

/** The renderer cannot produce images at all (no browser, no WebGL); the text says what to do. */
export class RendererUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RendererUnavailableError';
  }
}
