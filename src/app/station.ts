/**
 * Station bring-up: open the store, bring the configured rig up and hold it briefly under the
 * control loop, check the sim twin, and say plainly what this machine cannot run. The station
 * API and operator UI attach here when they land.
 */
import { RigError, type Clock, type Rig, type RigCommand } from '../rig/contract.js';
import { ControlLoop, DEFAULT_CONTROL_RATE_HZ } from '../rig/control-loop.js';
import { loadRapier } from '../sim/rapier.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash } from '../sim/calibration.js';
import { loadRos } from '../../ros/rclnodejs-loader.js';
import { UserError } from './command.js';
import { openStationStore } from './station-store.js';
import { clockForRigConfig } from './rig-registry.js';
import { createStationRig } from './station-rig.js';
import type { RigServices } from './services/rig-services.js';
import type { StationConfig } from './station-config.js';
import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';

export interface StationReport {
  dataDir: string;
  store: { file: string; layoutSets: number };
  rig: { type: string; achievedHz: number; jitterP99Ms: number; cycles: number; faults: string[] };
  /** The emulated cell, when the rig is one: what is on its table and how its world keeps real time. */
  cell?: {
    task: string;
    tier: number;
    objects: number;
    truthSha256: string;
    busyFraction: number;
    marginX: number;
    maxLagMs: number;
  };
  sim: { engine: string; calibrationSha256: string };
  ros: string;
  electron: string;
}

export interface StationOptions {
  dataDir: string;
  station: StationConfig;
  holdSeconds: number;
  signal: AbortSignal;
  log(line: string): void;
}

/** Holds the rig's current pose for a moment under the real control loop, then damps it. */
async function holdBriefly(
  rig: Rig,
  clock: Clock,
  seconds: number,
  signal: AbortSignal,
): Promise<StationReport['rig']> {
  await rig.configure();
  await rig.activate();
  try {
    const holdPose: RigCommand = { position: Float64Array.from(rig.read().position) };
    const loop = new ControlLoop({ rig, clock, rateHz: DEFAULT_CONTROL_RATE_HZ, source: () => holdPose });
    const stats = await loop.run({ untilS: clock.nowS() + seconds, signal });
    const faults = rig.read().faults.map((f) => f.message);
    return { type: '', achievedHz: stats.achievedHz, jitterP99Ms: stats.jitterP99Ms, cycles: stats.cycles, faults };
  } finally {
    await rig.deactivate();
  }
}

export async function bringUpStation(opts: StationOptions): Promise<StationReport> {
  const { log } = opts;
  const store = openStationStore(opts.dataDir);
  const storeFile = store.file;
  const layoutSets = store.listLayoutSets().length;
  store.close();
  log(`store     ${storeFile} (${layoutSets} layout sets)`);

  // Before the rig: every configured camera (but the cell's, drawn from a rollout's own world) streams, or says why not.
  const cameraLines: string[] = [];
  for (const c of opts.station.cameras) {
    if (c.kind === 'cell') {
      cameraLines.push(`${c.name} (the emulated cell's renderer, opened with each rollout)`);
      continue;
    }
    const cam = new FfmpegCamera(c);
    try {
      await cam.open();
      cameraLines.push(`${c.name} ${c.width}×${c.height} @ ${c.fps} fps streaming`);
    } catch (e) {
      throw new UserError(e instanceof Error ? e.message : String(e), 1);
    } finally {
      await cam.close();
    }
  }
  log(`cameras   ${cameraLines.length ? cameraLines.join('; ') : 'none configured'}`);

  const rigConfig = opts.station.rig;
  // The rig config's clock: the wall clock, or (the emulated cell) virtual time, paced or not.
  const clock = clockForRigConfig(rigConfig);
  let rig: Rig;
  let services: RigServices;
  try {
    ({ rig, services } = await createStationRig(rigConfig, { clock, signal: opts.signal }));
  } catch (e) {
    if (e instanceof RigError) throw new UserError(e.message);
    throw e;
  }
  const type = (rigConfig as { type: string }).type;
  let rigReport: StationReport['rig'];
  let cellReport: StationReport['cell'];
  try {
    rigReport = { ...(await holdBriefly(rig, clock, opts.holdSeconds, opts.signal)), type };
    const world = services.world();
    if (world)
      cellReport = {
        task: world.task,
        tier: world.tier,
        objects: world.objects,
        truthSha256: world.truthSha256,
        busyFraction: world.busyFraction,
        marginX: world.marginX,
        maxLagMs: world.maxLagMs,
      };
  } catch (e) {
    if (e instanceof RigError) throw new UserError(`The rig (${type}) did not come up: ${e.message}`, 1);
    throw e;
  } finally {
    await rig.close?.();
  }
  log(
    `rig       ${type}: held both arms ${opts.holdSeconds} s at ${rigReport.achievedHz.toFixed(0)} Hz (p99 jitter ${rigReport.jitterP99Ms.toFixed(2)} ms), then damped` +
      (rigReport.faults.length ? `; faults: ${rigReport.faults.join(' ')}` : ''),
  );

  if (cellReport) {
    log(
      `cell      emulated: a ${cellReport.task} layout (tier ${cellReport.tier}, ${cellReport.objects} objects) on its table, hidden physics ${cellReport.truthSha256.slice(0, 12)}…; ` +
        `its world used ${(cellReport.busyFraction * 100).toFixed(0)}% of a core (${cellReport.marginX.toFixed(1)}× real-time margin)`,
    );
  }

  const rapier = await loadRapier();
  const calibrationSha256 = simCalibrationHash(DEFAULT_SIM_CALIBRATION);
  const engine = `Rapier ${rapier.version()} (deterministic build)`;
  log(`sim twin  ${engine}, sim calibration ${calibrationSha256.slice(0, 12)}`);

  const ros = await loadRos({ warn: () => {} });
  const rosLine = ros.available ? 'ROS 2 available (rclnodejs loaded)' : ros.reason;
  log(`ros 2     ${rosLine}`);
  // The Electron binary is not downloaded on build machines (.npmrc); the station runs headless here.
  const electron =
    'not part of this build: the station runs as a Node process; the desktop shell is packaged separately';
  log(`electron  ${electron}`);
  return {
    dataDir: opts.dataDir,
    store: { file: storeFile, layoutSets },
    rig: rigReport,
    ...(cellReport ? { cell: cellReport } : {}),
    sim: { engine, calibrationSha256 },
    ros: rosLine,
    electron,
  };
}
