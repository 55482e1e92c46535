/** Messages between the env pool (main thread) and its worker threads. */
import type { CameraName, RgbImage } from '../../policy/contract.js';
import type { Layout } from '../../tasks/types.js';
import type { EnvEpisodeInfo } from './sim-env.js';
import type { EnvEvent } from './task-reward.js';

export interface EnvWorkerInit {
  readonly taskId: string;
  readonly controlHz: number;
  /** Canonical JSON of a randomization spec, or absent. */
  readonly randomizationJson?: string;
  /** Cameras drawn for every observation (none: state only). */
  readonly cameras?: readonly CameraName[];
}

/** One env's camera images for one observation, by camera. */
export type EnvImages = Partial<Record<CameraName, RgbImage>>;

export interface WorkerReset {
  readonly key: string;
  readonly seed: number;
  readonly tier?: number;
  readonly layout?: Layout;
  readonly episodeSeconds?: number;
}

export type ToEnvWorker =
  | { readonly type: 'reset'; readonly id: number; readonly envs: readonly WorkerReset[] }
  | { readonly type: 'step'; readonly id: number; readonly keys: readonly string[]; readonly actions: Float32Array }
  | { readonly type: 'free'; readonly keys: readonly string[] }
  | { readonly type: 'close' };

/** One env's step as a worker reports it. With autoreset, an ended episode's last state is in `final`. */
export interface WorkerStep {
  readonly state: Float32Array;
  /** The observation's images (after an autoreset: the next episode's first), when the server draws cameras. */
  readonly images?: EnvImages;
  readonly reward: number;
  readonly terminated: boolean;
  readonly truncated: boolean;
  readonly events: EnvEvent[];
  readonly invalid?: string;
  /** The episode that ended at this step: its info, return and last state (the env has reset to the next). */
  readonly ended?: {
    readonly episode: EnvEpisodeInfo;
    readonly return: number;
    readonly length: number;
    readonly finalState: Float32Array;
  };
  /** The new episode after an autoreset. */
  readonly next?: EnvEpisodeInfo;
}

export type FromEnvWorker =
  | { readonly type: 'ready' }
  | {
      readonly type: 'reset';
      readonly id: number;
      readonly states: Float32Array;
      readonly infos: EnvEpisodeInfo[];
      readonly images?: EnvImages[];
    }
  | { readonly type: 'step'; readonly id: number; readonly results: WorkerStep[] }
  | { readonly type: 'error'; readonly id: number; readonly message: string }
  | { readonly type: 'fatal'; readonly message: string };
