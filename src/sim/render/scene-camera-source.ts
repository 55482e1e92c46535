/**
 * The rollout's CameraSource for a sim: images of the scene as it is right now. Takes the snapshot
 * only when a camera is asked for, so a rollout whose policy lists no cameras touches neither the
 * scene nor the renderer.
 */
import type { CameraName, RgbImage } from '../../policy/contract.js';
import type { CameraSource } from '../../rollout/run-episode.js';
import type { Renderer } from './renderer.js';
import type { SceneSnapshot } from './scene-snapshot.js';

export function sceneCameraSource(renderer: Renderer, snapshot: () => SceneSnapshot): CameraSource {
  return {
    capture(cameras: readonly CameraName[]): Promise<Partial<Record<CameraName, RgbImage>>> {
      if (cameras.length === 0) return Promise.resolve({});
      return renderer.render(snapshot(), cameras);
    },
  };
}
