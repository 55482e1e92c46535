/**
 * The event stream (WebSocket, JSON text frames): every view's live updates. Pure (no Node built-
 * ins): the server and the operator UI share it; src/server/api-types.ts gathers every feature.
 */
import type { RigStatus } from './rig.js';
import type { RolloutRun } from './rollouts.js';
import type { SessionEvent } from './session.js';
import type { StationInfo } from './station.js';
import type { TeleopEvent } from './teleop.js';
import type { ProjectorState } from './projector.js';

export type StationEvent =
  | { readonly type: 'hello'; readonly station: StationInfo; readonly run: RolloutRun | null }
  | { readonly type: 'rig'; readonly rig: RigStatus }
  | { readonly type: 'run'; readonly run: RolloutRun }
  /** The store changed (a rollout stored): lists should reload. */
  | { readonly type: 'rollouts-changed' }
  /** The eval session's state changed (a new step, a prompt, a line). */
  | SessionEvent
  /** The teleop recording's state changed (a take, a reset, a line). */
  | TeleopEvent
  /** The projector shows a new frame (its PNG at PROJECTOR_FRAME_PATH). */
  | { readonly type: 'projector'; readonly projector: ProjectorState };
