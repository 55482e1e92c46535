/**
 * The station config's cameras, opened: V4L2 and testsrc through ffmpeg, `cell` through the
 * emulated cell's renderer. All of them are `Camera`s, so the recorder and the rollout's camera
 * source treat them alike. Opening is all or nothing: a camera that is missing, busy or delivers
 * another size is one sentence naming it, and every camera opened before it is closed again —
 * before any motor is enabled.
 */
import type { Clock } from '../rig/contract.js';
import type { Camera } from '../rig/camera.js';
import { CAMERA_NAMES, type CameraName } from '../policy/contract.js';
import type { CameraConfig } from '../../drivers/cameras/camera-config.js';
import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';
import type { CellCameras } from '../emulated-cell/cell-cameras.js';
import type { CameraRenderer, Offered } from './services/rig-services.js';
import { UserError } from './command.js';

export interface StationCameras {
  /** Every configured camera, streaming, in config order. */
  readonly list: readonly Camera[];
  readonly byName: Readonly<Record<string, Camera>>;
  close(): Promise<void>;
}

export interface OpenStationCamerasOptions {
  /** What draws cameras of source `cell` on this station (the emulated cell's renderer), or why nothing does. */
  readonly renderer: Offered<CameraRenderer>;
  /** Frames are stamped on the rig's clock. */
  readonly clock: Clock;
  /** Where the config came from, for sentences. */
  readonly source: string;
}

export async function openStationCameras(
  configs: readonly CameraConfig[],
  o: OpenStationCamerasOptions,
): Promise<StationCameras> {
  const nowS = (): number => o.clock.nowS();
  let cell: CellCameras | undefined;
  const cameras: Camera[] = [];
  const cellConfigs = configs.filter((c) => c.kind === 'cell');
  if (cellConfigs.length > 0) {
    const renderer = o.renderer;
    if (!renderer.available) {
      throw new UserError(
        `Camera ${cellConfigs[0].name} in ${o.source} has source "cell", but ${renderer.why}; give it a "v4l2:/dev/videoN" or "testsrc" source.`,
      );
    }
    const fps = cellConfigs[0].fps;
    if (cellConfigs.some((c) => c.fps !== fps))
      throw new UserError(
        `The cell cameras in ${o.source} ask for different fps; the cell renders all its cameras at one rate, so give them one 'fps'.`,
      );
    cell = renderer.render({ fps, nowS });
  }
  for (const c of configs) {
    if (c.kind === 'cell') {
      if (!(CAMERA_NAMES as readonly string[]).includes(c.name)) {
        throw new UserError(
          `Camera ${c.name} in ${o.source} has source "cell", but the cell renders only ${CAMERA_NAMES.join(', ')}; name it after one of them.`,
        );
      }
      const cam = cell!.cameras[c.name as CameraName];
      if (
        (c.width !== undefined && c.width !== cam.info.width) ||
        (c.height !== undefined && c.height !== cam.info.height)
      ) {
        throw new UserError(
          `Camera ${c.name} in ${o.source}: the cell renders ${cam.info.width}×${cam.info.height}, not ${c.width ?? cam.info.width}×${c.height ?? cam.info.height}; leave width and height out for a cell camera.`,
        );
      }
      cameras.push(cam);
    } else {
      cameras.push(new FfmpegCamera(c, { nowS }));
    }
  }
  const close = async (): Promise<void> => {
    await Promise.all(cameras.map((c) => c.close().catch(() => undefined)));
    await cell?.close();
  };
  // Together: a USB camera or the cell's browser can take seconds to start.
  const opened = await Promise.allSettled(cameras.map((c) => c.open()));
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await close();
    const why = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
    throw new UserError(why.endsWith('.') ? why : `${why}.`);
  }
  return { list: cameras, byName: Object.fromEntries(cameras.map((c) => [c.info.name, c])), close };
}
