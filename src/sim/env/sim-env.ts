/**
 * One sim environment for an RL trainer: a layout drawn from (task, tier, seed), the scene and
 * SimRig on it, one action (14 joint + gripper targets, policy order) per control step, the
 * observation (the rig's 14-d state), and the task's per-step reward and events from the
 * privileged state. The same seed gives the same layout, placement, world draw and, for the same
 * actions, the same steps.
 *
 * The env writes actions through the rig's own safety supervisor, exactly as the rollout loop
 * does: an action beyond the joint limits or too fast is clamped, never refused.
 */
import type { RigModel } from '../../rig/contract.js';
import { STATE_DIM } from '../../rig/contract.js';
import { yamRigModel } from '../../rig/yam.js';
import { createRng } from '../../layouts/random.js';
import { sampleLayout } from '../../layouts/sample.js';
import type { Layout, TaskDefinition } from '../../tasks/types.js';
import { DEFAULT_SIM_CALIBRATION, type SimCalibration } from '../calibration.js';
import { drawWorld, type HashedRandomizationSpec } from '../randomization.js';
import { createScene, HOME_START_POSITION, type SimScene } from '../scene.js';
import type { SceneSnapshot } from '../render/scene-snapshot.js';
import type { SceneLook } from '../render/scene-look.js';
import { SimRig } from '../sim-rig.js';
import { PLACEMENT_SIGMA_M, PLACEMENT_SIGMA_YAW_RAD } from '../sim-rollout.js';
import { taskReward, type EnvEvent, type TaskReward } from './task-reward.js';

/** The rig holds its start pose this long before the first observation, while the parts settle into the tote. */
export const ENV_SETTLE_S = 0.5;

export interface SimEnvConfig {
  readonly task: TaskDefinition;
  readonly controlHz: number;
  readonly calibration?: SimCalibration;
  readonly randomization?: HashedRandomizationSpec;
  readonly rigModel?: RigModel;
}

export interface EnvResetParams {
  readonly seed: number;
  /** Fixed tier; absent, each episode draws its tier from its seed. */
  readonly tier?: number;
  /** A hand-built layout instead of a sampled one (every episode of this env uses it). */
  readonly layout?: Layout;
  /** Episode length, s (default the task's). */
  readonly episodeSeconds?: number;
}

export interface EnvEpisodeInfo {
  readonly seed: number;
  readonly tier: number;
  readonly parts: number;
  readonly episode_steps: number;
}

export interface EnvStepResult {
  readonly state: Float32Array;
  readonly reward: number;
  readonly terminated: boolean;
  readonly truncated: boolean;
  readonly events: EnvEvent[];
  /** Why the episode ended early when the sim became unstable. */
  readonly invalid?: string;
}

export class SimEnv {
  private scene: SimScene | undefined;
  private rig: SimRig | undefined;
  private reward: TaskReward | undefined;
  private steps = 0;
  /** Control ticks since the scene was built (settle included): the clock's time is ticks × dt. */
  private ticks = 0;
  private episodeSteps = 0;
  private readonly dt: number;
  private readonly command = new Float64Array(STATE_DIM);
  private readonly rigModel: RigModel;
  episode: EnvEpisodeInfo | undefined;
  /** How the cameras see this episode (a randomization's visual draw), or undefined. */
  look: SceneLook | undefined;

  constructor(private readonly config: SimEnvConfig) {
    this.dt = 1 / config.controlHz;
    this.rigModel = config.rigModel ?? yamRigModel();
  }

  /** Starts an episode; returns its first observation. Throws SceneError for a layout the sim cannot build. */
  async reset(p: EnvResetParams): Promise<{ state: Float32Array; info: EnvEpisodeInfo }> {
    this.free();
    const { task } = this.config;
    const rng = createRng(p.seed);
    const tier = p.layout?.tier ?? p.tier ?? rng.int(task.tiers[0].tier, task.tiers[task.tiers.length - 1].tier);
    const layout = p.layout ?? sampleLayout(task, tier, 0, rng.fork());
    const base = this.config.calibration ?? DEFAULT_SIM_CALIBRATION;
    const world = this.config.randomization
      ? drawWorld(base, this.config.randomization, p.seed % 0x7fffffff, 0)
      : undefined;
    const sigma = world?.placement ?? { sigmaM: PLACEMENT_SIGMA_M, sigmaYawRad: PLACEMENT_SIGMA_YAW_RAD };
    this.look = world?.look;
    this.scene = await createScene({
      rigModel: this.rigModel,
      task,
      layout,
      calibration: world?.calibration ?? base,
      placementNoise: { seed: p.seed, ...sigma },
    });
    this.rig = new SimRig({ scene: this.scene, safety: { controlPeriodS: this.dt } });
    await this.rig.configure();
    await this.rig.activate();
    this.ticks = 0;
    this.command.set(HOME_START_POSITION);
    for (let t = this.dt; t <= ENV_SETTLE_S + 1e-9; t += this.dt) this.advance();
    this.reward = taskReward(task, layout);
    this.reward.observe(0, this.scene.sightings());
    this.steps = 0;
    this.episodeSteps = Math.max(1, Math.round((p.episodeSeconds ?? task.episodeSeconds) * this.config.controlHz));
    this.episode = { seed: p.seed, tier, parts: layout.objects.length, episode_steps: this.episodeSteps };
    return { state: this.state(), info: this.episode };
  }

  /** One control step with this action (14 finite numbers, policy order). */
  step(action: ArrayLike<number>): EnvStepResult {
    const rig = this.rig;
    const scene = this.scene;
    if (!rig || !scene || !this.reward) throw new Error('step before reset');
    for (let i = 0; i < STATE_DIM; i++) this.command[i] = action[i];
    this.advance();
    this.steps += 1;
    const { events, reward } = this.reward.observe(this.steps * this.dt, scene.sightings());
    const fault = rig.read().faults.find((f) => f.kind === 'sim-unstable');
    const terminated = fault !== undefined || this.reward.allDone();
    const truncated = !terminated && this.steps >= this.episodeSteps;
    return { state: this.state(), reward, terminated, truncated, events, ...(fault ? { invalid: fault.message } : {}) };
  }

  /** The scene as it is now, for the cameras. */
  snapshot(): SceneSnapshot {
    if (!this.scene) throw new Error('snapshot before reset');
    return this.scene.snapshot();
  }

  /** A step without task events or reward (benchmarks: what physics alone costs). */
  stepPhysicsOnly(action: ArrayLike<number>): void {
    for (let i = 0; i < STATE_DIM; i++) this.command[i] = action[i];
    this.advance();
  }

  free(): void {
    this.scene?.free();
    this.scene = undefined;
    this.rig = undefined;
    this.reward = undefined;
  }

  private advance(): void {
    const rig = this.rig!;
    rig.write({ position: this.command });
    this.ticks += 1;
    void rig.clock.waitUntil(this.ticks * this.dt);
    rig.tick();
  }

  private state(): Float32Array {
    return Float32Array.from(this.rig!.read().position);
  }
}
