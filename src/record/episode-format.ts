/**
 * What an episode file holds, by name: its topics, its metadata records and its event kinds.
 * The writer, the readers, inspect and export all take their names from here (docs/recording.md
 * documents the same for people reading the files with other tools).
 */
import type { RigModel } from '../rig/contract.js';

export const TOPICS = {
  /** sensor_msgs/msg/JointState: the measured state, 14 joints in policy order, every control step. */
  jointStates: '/joint_states',
  /** sensor_msgs/msg/JointState: the command as applied after safety clamping (position; velocity/effort when fed forward). */
  jointCommands: '/joint_commands',
  /** tandem_msgs/msg/EpisodeEvent: safety interventions, chunk boundaries, phases, cameras lost, operator marks. */
  events: '/tandem/events',
  /** tandem_msgs/msg/StepTiming: per control step, the age of the action's observation and of its camera frames, and camera drops. */
  stepTiming: '/tandem/step_timing',
  /** tandem_msgs/msg/RigCycle: every motor cycle of a rig that runs in its own thread (state and the command sent), numbered. */
  rigCycles: '/tandem/rig_cycles',
} as const;

const CAMERA_PREFIX = '/cameras/';
const CAMERA_SUFFIX = '/image/compressed';

/** sensor_msgs/msg/CompressedImage (JPEG as the camera gave it) of one camera. */
export function cameraTopic(camera: string): string {
  return `${CAMERA_PREFIX}${camera}${CAMERA_SUFFIX}`;
}

/** The camera a topic carries, or undefined for other topics. */
export function cameraOfTopic(topic: string): string | undefined {
  return topic.startsWith(CAMERA_PREFIX) && topic.endsWith(CAMERA_SUFFIX)
    ? topic.slice(CAMERA_PREFIX.length, -CAMERA_SUFFIX.length)
    : undefined;
}

/** MCAP metadata record written when the episode starts: what it is (a cut-off file still says). */
export const EPISODE_METADATA_NAME = 'tandem.episode';
/** MCAP metadata record written when the episode file is finished: how it ended, camera counters. */
export const EPISODE_END_METADATA_NAME = 'tandem.episode.end';

export const EVENT_KINDS = [
  /** A safety supervisor intervention (detail.safety_kind: position-clamped, watchdog-hold, estop …). */
  'safety',
  /** A policy action chunk took over (detail: chunk_index, observed_step, inference_ms). */
  'chunk',
  /** An episode phase began or the episode ended (detail: phase, outcome, reason). */
  'phase',
  /** A camera stopped delivering frames; the episode went on without it. */
  'camera-lost',
  /** Something the operator marked (a note, a disputed moment). */
  'mark',
  /** Teleop: leader–follower sync engaged or released. */
  'sync',
  /** A policy rollout: the operator took over with the leader (detail.takeover: start) or gave back (end), or the takeover input's own notes (sync-refused, leader-lost …). */
  'takeover',
  /** The recording itself: what it lacks and why (rig cycles the recorder could not keep). */
  'recorder',
  /** What happened to an object in the task's terms (detail.task_event: grasped, released, entered-region, left-region, knocked-over, off-table, progress; object, region, arm). */
  'task',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** Joint names in policy order: left_joint1 … left_gripper, right_joint1 … right_gripper. */
export function jointNames(model: RigModel): string[] {
  return model.arms.flatMap((arm) => [...arm.joints.map((j) => j.name), arm.gripper.name]);
}
