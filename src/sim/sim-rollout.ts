/**
 * One sim rollout: scene from the layout, SimRig on it, the policy through an open-loop chunk
 * executor, and the one rollout loop (src/rollout) with the privileged end state for scoring.
 * Sweeps run this in worker threads; `tandem sim rollout` runs it once.
 */
import { performance } from 'node:perf_hooks';
import type { RigModel } from '../rig/contract.js';
import { yamRigModel } from '../rig/yam.js';
import type { Policy } from '../policy/contract.js';
import { createOpenLoopExecutor } from '../policy/open-loop-executor.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { runEpisode, type CameraSource, type EpisodeRecording, EPISODE_CONTROL_HZ } from '../rollout/run-episode.js';
import { watchTable } from '../rollout/table-watch.js';
import { unrunEpisode, type Episode } from '../rollout/episode.js';
import { DEFAULT_SIM_CALIBRATION, simCalibrationHash, type SimCalibration } from './calibration.js';
import type { Renderer } from './render/renderer.js';
import type { SceneLook } from './render/scene-look.js';
import { ChromiumRenderer } from './render/chromium-renderer.js';
import { SceneError } from './scene.js';
import { createEngineScene } from './engine-scene.js';
import type { PhysicsScene } from './physics-scene.js';
import { SimRig } from './sim-rig.js';
import { objectOutcomeCounts, objectOutcomes } from '../tasks/object-outcomes.js';

/** Operators place to projected cues with ≈2 mm standard deviation (reference lab). */
export const PLACEMENT_SIGMA_M = 0.002;
export const PLACEMENT_SIGMA_YAW_RAD = 0.02;

export interface SimRolloutOptions {
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly policy: Policy;
  readonly seed: number;
  readonly episodeSeconds?: number;
  readonly controlHz?: number;
  readonly calibration?: SimCalibration;
  readonly rigModel?: RigModel;
  readonly startPosition?: ArrayLike<number>;
  /** Images for policies that list cameras; never touched for those that list none. */
  readonly renderer?: Renderer;
  /** How the cameras see this rollout (a domain-randomization draw); the pictures only, never the physics. */
  readonly look?: SceneLook;
  /** Seeded placement noise (default on: the seed then varies the rollout like a real re-placement). */
  readonly placementNoise?: boolean;
  /** Its size (default PLACEMENT_SIGMA_M / PLACEMENT_SIGMA_YAW_RAD; a randomization spec may widen it). */
  readonly placementSigma?: { readonly sigmaM: number; readonly sigmaYawRad: number };
  readonly signal?: AbortSignal;
  /** Records the episode as it runs, in the same file format as rig rollouts. */
  readonly recording?: EpisodeRecording;
}

export interface SimRolloutResult {
  readonly episode: Episode;
  readonly calibrationSha256: string;
  /** Physics steps taken and wall time spent (for real-time factors). */
  readonly physicsSteps: number;
  readonly wallMs: number;
  /** Camera images the renderer drew for the policy (0 for policies without cameras). */
  readonly cameraFrames: number;
}

/**
 * The counts a sim rollout reports and stores: the task's own scoring counts plus `offTable`,
 * the objects that ended off the table (knocked or dropped off the edge). The task's scoring
 * does not change; undefined when the rollout was not scored. Also, per object kind, how many
 * objects ended each way (src/tasks/object-outcomes.ts: "objects:knocked-over:bottle-500ml").
 */
export function simRolloutCounts(
  episode: Episode,
  task: TaskDefinition,
  layout: Layout,
): Record<string, number> | undefined {
  if (!episode.progress) return undefined;
  const endStates = episode.endStates ?? [];
  const offTable = endStates.filter((e) => e.offTable === true).length;
  // How each object ended, per object kind: the failure breakdown reads these from stored rows.
  return { ...episode.progress.counts, offTable, ...objectOutcomeCounts(objectOutcomes(task, layout, endStates)) };
}

export async function runSimRollout(opts: SimRolloutOptions): Promise<SimRolloutResult> {
  const calibration = opts.calibration ?? DEFAULT_SIM_CALIBRATION;
  const calibrationSha256 = simCalibrationHash(calibration);
  const controlHz = opts.controlHz ?? EPISODE_CONTROL_HZ;
  const episodeSeconds = opts.episodeSeconds ?? opts.task.episodeSeconds;
  const rigModel = opts.rigModel ?? yamRigModel();
  const t0 = performance.now();
  let scene: PhysicsScene;
  try {
    scene = await createEngineScene({
      rigModel,
      task: opts.task,
      layout: opts.layout,
      calibration,
      startPosition: opts.startPosition,
      placementNoise:
        opts.placementNoise === false
          ? undefined
          : {
              seed: opts.seed,
              ...(opts.placementSigma ?? { sigmaM: PLACEMENT_SIGMA_M, sigmaYawRad: PLACEMENT_SIGMA_YAW_RAD }),
            },
    });
  } catch (e) {
    if (!(e instanceof SceneError)) throw e;
    const episode = unrunEpisode({
      outcome: 'layout-unbuildable',
      reason: e.message,
      taskId: opts.task.id,
      layoutIndex: opts.layout.index,
      tier: opts.layout.tier,
      seed: opts.seed,
      controlHz,
      episodeSeconds,
      policyName: opts.policy.info.name,
      policyCheckpointSha256: opts.policy.info.checkpointSha256,
    });
    return { episode, calibrationSha256, physicsSteps: 0, wallMs: performance.now() - t0, cameraFrames: 0 };
  }
  // A policy that wants images and was given no renderer gets one for this rollout (its browser
  // starts on the first image); sweeps pass one per worker instead, to start chromium once.
  const ownRenderer = !opts.renderer && opts.policy.info.cameras.length > 0 ? new ChromiumRenderer() : undefined;
  try {
    const rig = new SimRig({ scene, safety: { controlPeriodS: 1 / controlHz } });
    const renderer = opts.renderer ?? ownRenderer;
    let cameraFrames = 0;
    const cameras: CameraSource | undefined = renderer
      ? {
          capture: async (names) => {
            const images = await renderer.render(scene.snapshot(), names, opts.look);
            cameraFrames += Object.keys(images).length;
            return images;
          },
        }
      : undefined;
    const episode = await runEpisode({
      rig,
      executor: createOpenLoopExecutor(opts.policy),
      policy: opts.policy.info,
      cameras,
      privileged: () => scene.privilegedState(),
      clock: rig.clock,
      layout: opts.layout,
      task: opts.task,
      episodeSeconds,
      controlHz,
      seed: opts.seed,
      endState: { endStates: () => scene.endStates(), fingerprint: () => scene.fingerprint() },
      signal: opts.signal,
      recording: opts.recording,
      taskEvents: watchTable(opts.task, opts.layout, () => scene.sightings()),
    });
    return { episode, calibrationSha256, physicsSteps: scene.steps, wallMs: performance.now() - t0, cameraFrames };
  } finally {
    scene.free();
    await ownRenderer?.close();
  }
}
