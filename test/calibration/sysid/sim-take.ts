/**
 * Takes recorded on the sim twin itself, for sysid tests that need an answer known exactly: a
 * SimRig on a given calibration (the "robot"), driven at 250 Hz through the excitation trajectory,
 * recorded by the real EpisodeRecorder as a teleop take would be.
 */
import { EPISODE_CONTROL_HZ } from '../../../src/rollout/run-episode.js';
import { EpisodeRecorder } from '../../../src/record/episode-recorder.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { createEngineScene } from '../../../src/sim/engine-scene.js';
import { SimRig } from '../../../src/sim/sim-rig.js';
import { simCalibrationHash, type SimCalibration } from '../../../src/sim/calibration.js';
import { runSimRollout } from '../../../src/sim/sim-rollout.js';
import { layoutAt, type LayoutSet } from '../../../src/layouts/layout-set.js';
import { openPolicy } from '../../../src/rollout/policy-registry.js';
import { openSimEpisodeRecorder } from '../../../src/app/episode-recording.js';
import type { SafetyEvent } from '../../../src/rig/contract.js';
import { getTask } from '../../../src/tasks/registry.js';
import { EXCITATION_CENTRE_RAD, excitationTrajectory } from '../../../calibration/sysid/excitation.js';

export const CENTRE_POSE = [...EXCITATION_CENTRE_RAD, 1, ...EXCITATION_CENTRE_RAD, 1];

export interface SimTakeSpec {
  readonly file: string;
  readonly calibration: SimCalibration;
  readonly seconds: number;
  readonly seed: number;
  readonly metadata?: Record<string, string>;
  /** Nothing recorded from this time for this long (a stalled host). */
  readonly gap?: { readonly atS: number; readonly forS: number };
  /** Safety events written into the file as the supervisor would. */
  readonly safety?: readonly SafetyEvent[];
}

export async function recordSimTake(o: SimTakeSpec): Promise<void> {
  const model = yamRigModel();
  const traj = excitationTrajectory(model, { seconds: o.seconds + 1, seed: o.seed, start: CENTRE_POSE });
  const scene = await createEngineScene({
    rigModel: model,
    task: getTask('bottles-in-the-bin'),
    layout: { index: 0, tier: 1, fixtures: [], objects: [] },
    calibration: o.calibration,
    startPosition: CENTRE_POSE,
  });
  const rig = new SimRig({ scene });
  await rig.configure();
  await rig.activate();
  const rec = await EpisodeRecorder.open({
    file: o.file,
    rigModel: model,
    cameras: [],
    metadata: { kind: 'teleop', rig: 'sim', rig_model: model.name, control_hz: '250', table: 'empty', ...o.metadata },
    unixOffsetS: 1_764_590_000,
  });
  const position = new Float64Array(14);
  // The trajectory's smooth lift from the centre is a no-op; its sines ease in over 2 s from t = 4.
  const startAt = 4;
  for (let i = 0; i < o.seconds * 250; i++) {
    const t = i / 250;
    await rig.clock.waitUntil(t);
    rig.tick();
    const recorded = !(o.gap && t >= o.gap.atS && t < o.gap.atS + o.gap.forS);
    if (recorded) rec.jointState(rig.read());
    const tt = startAt + t;
    const k = Math.min(traj.points.length - 1, Math.floor(tt * 50));
    const a = traj.points[k];
    const b = traj.points[Math.min(traj.points.length - 1, k + 1)];
    const f = tt * 50 - k;
    for (let j = 0; j < 14; j++) position[j] = a.q[j] + (b.q[j] - a.q[j]) * f;
    const applied = rig.write({ position });
    if (recorded) rec.command(t, applied);
    for (const e of rig.takeSafetyEvents()) rec.safetyEvent(e);
  }
  for (const e of o.safety ?? []) rec.safetyEvent(e);
  const summary = await rec.close({ outcome: 'kept' });
  scene.free();
  if (summary.status !== 'finished') throw new Error(`sim take not finished: ${summary.failure}`);
}

export interface SimRolloutTakeSpec {
  readonly file: string;
  /** The "robot": the physics the take is recorded on. */
  readonly calibration: SimCalibration;
  readonly set: LayoutSet;
  readonly layoutIndex: number;
  readonly seconds: number;
  /** Default code:bottles-in-the-bin, which grasps each bottle, lifts it and carries it to the bin. */
  readonly policySpec?: string;
}

/**
 * A take that holds objects: a code policy's sim rollout on a layout, recorded by the real
 * recorder as `tandem sim rollout --record` records it (the file names the layout set by its
 * SHA-256 and the index). No placement noise: the objects stand where the layout says, as the
 * replay places them.
 */
export async function recordSimRolloutTake(o: SimRolloutTakeSpec): Promise<void> {
  const task = getTask(o.set.task);
  const layout = layoutAt(o.set, o.layoutIndex);
  const spec = o.policySpec ?? 'code:bottles-in-the-bin';
  const policy = await openPolicy(spec, { cwd: process.cwd() });
  const recorder = await openSimEpisodeRecorder(o.file, {
    task,
    layoutSetSha256: o.set.sha256,
    layout,
    policySpec: spec,
    policy: policy.info,
    calibrationSha256: simCalibrationHash(o.calibration),
    controlHz: EPISODE_CONTROL_HZ,
    episodeSeconds: o.seconds,
    seed: 0,
  });
  const r = await runSimRollout({
    task,
    layout,
    policy,
    seed: 0,
    episodeSeconds: o.seconds,
    calibration: o.calibration,
    placementNoise: false,
    recording: recorder,
  });
  const summary = await recorder.close({ outcome: r.episode.outcome, status: r.episode.status });
  await policy.close?.();
  if (summary.status !== 'finished') throw new Error(`sim rollout take not finished: ${summary.failure}`);
}
