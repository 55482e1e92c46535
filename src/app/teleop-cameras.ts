/** The cameras a teleop session records: the operator's `--cameras` spelling opened, and how the session row names them. */
import { UserError } from './command.js';
import type { Clock } from '../rig/contract.js';
import type { Camera } from '../rig/camera.js';
import { CAMERA_NAMES } from '../policy/contract.js';
import type { CellCameras } from '../emulated-cell/cell-cameras.js';
import type { RigServices } from './services/rig-services.js';
import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';
import { cameraSourceOf } from '../../drivers/cameras/camera-config.js';
import type { StationConfig } from './station-config.js';

/** --cameras none | cell | testsrc:N | v4l2:/dev/videoN,… */
export async function openTeleopCameras(
  spec: string,
  services: RigServices,
  clock: Clock,
  fps: number,
): Promise<{ cameras: Camera[]; close(): Promise<void> }> {
  if (spec === 'none') return { cameras: [], close: async () => {} };
  const nowS = (): number => clock.nowS();
  if (spec === 'cell') {
    const renderer = services.cameraRenderer;
    if (!renderer.available)
      throw new UserError(
        '--cameras cell needs the emulated cell as the follower (--follower cell); use testsrc:N or v4l2:/dev/videoN with other rigs.',
      );
    const cams: CellCameras = renderer.render({ fps, nowS, clock });
    const list = CAMERA_NAMES.map((n) => cams.cameras[n]);
    try {
      await Promise.all(list.map((c) => c.open()));
    } catch (e) {
      await cams.close();
      throw new UserError(`The cell's cameras did not start: ${(e as Error).message}`);
    }
    return { cameras: list, close: () => cams.close() };
  }
  let cameras: FfmpegCamera[];
  const t = /^testsrc:(\d+)$/.exec(spec);
  if (t) {
    const n = Number(t[1]);
    if (n < 1 || n > 8) throw new UserError(`--cameras testsrc:N takes 1 to 8 cameras, not ${n}.`);
    cameras = Array.from(
      { length: n },
      (_, i) =>
        new FfmpegCamera(
          { name: CAMERA_NAMES[i] ?? `cam_${i}`, kind: 'testsrc', width: 320, height: 240, fps },
          { nowS },
        ),
    );
  } else if (spec.startsWith('v4l2:')) {
    const devices = spec.slice(5).split(',');
    if (devices.some((d) => !d.startsWith('/dev/')))
      throw new UserError(
        `--cameras v4l2: needs devices under /dev, comma separated (e.g. v4l2:/dev/video0,/dev/video2), not '${spec}'.`,
      );
    cameras = devices.map(
      (device, i) =>
        new FfmpegCamera(
          { name: CAMERA_NAMES[i] ?? `cam_${i}`, kind: 'v4l2', device, width: 640, height: 480, fps },
          { nowS },
        ),
    );
  } else {
    throw new UserError(`--cameras must be none, cell, testsrc:N or v4l2:/dev/videoN[,…], not '${spec}'.`);
  }
  const opened: FfmpegCamera[] = [];
  try {
    for (const c of cameras) {
      await c.open();
      opened.push(c);
    }
  } catch (e) {
    await Promise.all(opened.map((c) => c.close()));
    throw new UserError((e as Error).message);
  }
  return { cameras, close: async () => void (await Promise.all(cameras.map((c) => c.close()))) };
}

/**
 * The cameras a teleop session records, as its session row names them: a station config's own
 * cameras when it names any, else the operator's choice (`--cameras`, or the station page's).
 */
export function teleopCamerasOf(station: StationConfig | undefined, chosen: string): string {
  return station && station.cameras.length > 0
    ? station.cameras.map((c) => `${c.name}=${cameraSourceOf(c)}`).join(',')
    : chosen;
}
