/**
 * The Policy contract: one interface for local ONNX models, remote (openpi-compatible)
 * servers and privileged code policies. Pure: no Node built-ins.
 */
import type { RigModel } from '../rig/contract.js';

export type CameraName = 'cam_high' | 'cam_left_wrist' | 'cam_right_wrist';
export const CAMERA_NAMES: readonly CameraName[] = ['cam_high', 'cam_left_wrist', 'cam_right_wrist'];

/** An RGB image, 8 bits per channel, row-major HWC. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array; // width * height * 3
}

/** Object and fixture poses from the sim: only privileged (code) policies may read them. */
export interface PrivilegedObjectState {
  readonly id: string;
  readonly kind: string;
  readonly position: readonly [number, number, number];
  readonly quaternion: readonly [number, number, number, number];
}
export interface PrivilegedState {
  readonly objects: readonly PrivilegedObjectState[];
  readonly fixtures: readonly PrivilegedObjectState[];
}

export interface Observation {
  /** Episode time, seconds. */
  readonly timeS: number;
  /** 14 entries, policy order (see rig contract), unnormalised. */
  readonly state: Float32Array;
  readonly images: Partial<Record<CameraName, RgbImage>>;
  readonly prompt: string;
  /** Present only in sim; code policies require it. */
  readonly privileged?: PrivilegedState;
}

/** Where one inference's time went, milliseconds. Remote policies fill the split; all fill totalMs. */
export interface InferenceTiming {
  readonly totalMs: number;
  /** Observation → model inputs or wire bytes (resize, normalise, msgpack). */
  readonly encodeMs?: number;
  /** Round trip minus the server's own time (remote only). */
  readonly networkMs?: number;
  /** Time the server spent in its policy (remote only; as the server reports it). */
  readonly serverMs?: number;
  /** The model's own time (local model run, or the server's reported policy time). */
  readonly modelMs?: number;
  /** Model outputs or wire bytes → actions. */
  readonly decodeMs?: number;
}

/** H rows of 14 target positions, row-major. */
export interface ActionChunk {
  readonly horizon: number;
  readonly actions: Float32Array; // horizon * 14
  readonly timing?: InferenceTiming;
}

export interface PolicyInfo {
  readonly name: string;
  /** SHA-256 of the checkpoint (model file or server-reported), or of the code policy's source version. */
  readonly checkpointSha256: string;
  readonly actionHorizon: number;
  readonly cameras: readonly CameraName[];
  readonly needsPrivilegedState: boolean;
}

export interface EpisodeContext {
  readonly seed: number;
  readonly prompt: string;
  readonly rigModel: RigModel;
  readonly controlHz: number;
}

export interface Policy {
  readonly info: PolicyInfo;
  reset(ctx: EpisodeContext): Promise<void>;
  infer(obs: Observation): Promise<ActionChunk>;
  close?(): Promise<void>;
}

/** A policy failure that is not the policy's fault as a controller (timeouts, closed servers). */
export class PolicyUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason: 'timeout' | 'disconnected' | 'server-error' | 'bad-response',
  ) {
    super(message);
    this.name = 'PolicyUnavailableError';
  }
}

/** One control step's action, with where it came from (recorded per step in the rollout). */
export interface StepAction {
  /** 14 target positions, policy order. */
  readonly position: Float32Array;
  /** Which inferred chunk (0-based within the episode) and which row of it produced this action. */
  readonly chunkIndex: number;
  readonly row: number;
}

/**
 * Turns a Policy's action chunks into one action per control step (open loop, replanning,
 * ensembling). The rollout calls `step` once per cycle; `observe` is called only when the
 * executor needs a new observation, so policies without images pay nothing for rendering.
 *
 * Failure contract for the rollout (runEpisode):
 * - `step` rejects with PolicyUnavailableError when the policy missed its deadline ('timeout'),
 *   the server went away ('disconnected'), reported an error ('server-error') or answered
 *   something unreadable ('bad-response'). The rollout then holds the rig and ends the episode
 *   as "aborted: policy <reason>" — never scored as a policy failure.
 * - Any other rejection (e.g. NaN actions, a chunk shorter than the execution plan needs, an
 *   observation the policy cannot take) is the policy's own fault: the rollout still holds the
 *   rig, and records the message as the episode's error.
 * - Out-of-limit actions are NOT rejected here: the rig's safety supervisor clamps and counts them.
 */
export interface ChunkExecutor {
  reset(ctx: EpisodeContext): Promise<void>;
  step(stepIndex: number, tS: number, observe: () => Promise<Observation>): Promise<StepAction>;
  /**
   * The operator drove the rig for a while (a takeover) and gives back: the chunk in hand, and any
   * inference in flight, were planned from a world that is gone, so the next step observes afresh.
   */
  replanNow(): void;
}
