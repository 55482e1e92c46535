/**
 * Pre-flight: what must hold before the operator places anything — every camera the policies read
 * is in the station config and streams, the cell's interlocks are closed — each problem one
 * sentence, all of them at once, so a session does not find out after the objects are placed.
 * The rig itself is checked as it is created (its factory refuses a bad config) and the policies
 * as they are opened (a spec that does not load, a server that does not answer).
 */
import type { PolicyInfo } from '../policy/contract.js';
import type { Camera } from '../rig/camera.js';
import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';
import type { CellIo } from './cell-io.js';
import { UserError } from './command.js';
import { missingPolicyCameras, rolloutCameras, type StationConfig } from './station-config.js';
import { DEFAULT_CELL_CAMERA_FPS } from '../emulated-cell/cell-cameras.js';

export interface PreflightOptions {
  readonly station: StationConfig;
  readonly policies: readonly PolicyInfo[];
  /** The policies get black frames: their cameras need not exist (a rehearsal). */
  readonly blankCameras: boolean;
  readonly cellIo?: CellIo;
  /** Makes a camera for the check (tests pass their own); default ffmpeg for v4l2 and testsrc. */
  readonly cameraOf?: (c: StationConfig['cameras'][number]) => Camera | undefined;
}

/** Every problem found, one sentence each (empty: clear to place). */
export async function preflightProblems(o: PreflightOptions): Promise<string[]> {
  const problems: string[] = [];
  if (!o.blankCameras) {
    for (const p of o.policies) {
      const missing = missingPolicyCameras(
        { ...o.station, cameras: rolloutCameras(o.station, p, DEFAULT_CELL_CAMERA_FPS) },
        p,
      );
      if (missing) problems.push(missing);
    }
  }
  const read = new Set(o.blankCameras ? [] : o.policies.flatMap((p) => p.cameras as readonly string[]));
  // The cell's cameras draw the rig's own world, which exists once a rollout's rig does: checked then.
  const cameraOf = o.cameraOf ?? ((c) => (c.kind === 'cell' ? undefined : new FfmpegCamera(c)));
  const checks = o.station.cameras
    .filter((c) => read.has(c.name))
    .map(async (c) => {
      const cam = cameraOf(c);
      if (!cam) return;
      try {
        await cam.open();
      } catch (e) {
        problems.push(e instanceof Error ? e.message : String(e));
      } finally {
        await cam.close();
      }
    });
  await Promise.all(checks);
  const interlock = o.cellIo?.plc.current();
  if (interlock?.open)
    problems.push(
      `The cell's interlocks are open (${(interlock.reason ?? 'an interlock of the cell is open').replace(/\.$/, '')}); close them before placing anything.`,
    );
  return problems;
}

/** Throws one UserError listing every pre-flight problem (a line each), or returns when clear. */
export async function preflight(o: PreflightOptions): Promise<void> {
  const problems = await preflightProblems(o);
  if (problems.length === 1) throw new UserError(problems[0]);
  if (problems.length > 1)
    throw new UserError(
      `Pre-flight found ${problems.length} problems before anything is placed:\n${problems.map((p) => `- ${p}`).join('\n')}`,
    );
}
