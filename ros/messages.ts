/**
 * ROS 2 message shapes and the mapping between them and the Rig contract. No ROS needed: these are
 * plain objects in the shape rclnodejs publishes and receives (and the CDR serializer encodes).
 *   RigState   ⇄ sensor_msgs/msg/JointState       (names from the rig model; order-independent in)
 *   RigCommand → trajectory_msgs/msg/JointTrajectory (one point, reached after timeFromStartS)
 * Grippers travel as joints named like `left_gripper` in the YAM convention (0 closed … 1 open).
 */
import { DOF_PER_ARM, STATE_DIM, type RigCommand, type RigModel, type RigState } from '../src/rig/contract.js';
import type { JointStateMessage as JointStateMsg, RosHeader, RosTime } from '../src/record/ros2-messages.js';

// The ROS 2 shapes the episode files use too: one definition of each (src/record/ros2-messages.ts).
export type { RosTime, RosHeader } from '../src/record/ros2-messages.js';
export type { JointStateMessage as JointStateMsg } from '../src/record/ros2-messages.js';

export interface JointTrajectoryPointMsg {
  positions: number[];
  velocities: number[];
  accelerations: number[];
  effort: number[];
  time_from_start: RosTime;
}

export interface JointTrajectoryMsg {
  header: RosHeader;
  joint_names: string[];
  points: JointTrajectoryPointMsg[];
}

export const JOINT_STATE_TYPE = 'sensor_msgs/msg/JointState';
export const JOINT_TRAJECTORY_TYPE = 'trajectory_msgs/msg/JointTrajectory';
export const TRIGGER_TYPE = 'std_srvs/srv/Trigger';

/**
 * ROS 2 message definitions in the `ros2msg` schema form: the message's own text, then each
 * dependency after a line of 80 '=' and `MSG: pkg/Type`. The shared dependencies are written once.
 */
const SEPARATOR = '='.repeat(80);
const HEADER = 'MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n';
const TIME = 'MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n';
const DURATION = 'MSG: builtin_interfaces/Duration\nint32 sec\nuint32 nanosec\n';
const TRAJECTORY_POINT =
  'MSG: trajectory_msgs/JointTrajectoryPoint\nfloat64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\nbuiltin_interfaces/Duration time_from_start\n';

function withDependencies(main: string, ...dependencies: string[]): string {
  return [main, ...dependencies].join(`${SEPARATOR}\n`);
}

export const JOINT_STATE_DEFINITION = withDependencies(
  'std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n',
  HEADER,
  TIME,
);

export const JOINT_TRAJECTORY_DEFINITION = withDependencies(
  'std_msgs/Header header\nstring[] joint_names\ntrajectory_msgs/JointTrajectoryPoint[] points\n',
  HEADER,
  TIME,
  TRAJECTORY_POINT,
  DURATION,
);

export function toRosTime(seconds: number): RosTime {
  const sec = Math.floor(seconds);
  let nanosec = Math.round((seconds - sec) * 1e9);
  if (nanosec >= 1e9) return { sec: sec + 1, nanosec: nanosec - 1e9 };
  if (nanosec < 0) nanosec = 0;
  return { sec, nanosec };
}

export function fromRosTime(t: RosTime): number {
  return t.sec + t.nanosec / 1e9;
}

/** The 14 state names in policy order: the model's joint names, then each arm's gripper. */
export function stateNames(model: RigModel): string[] {
  return model.arms.flatMap((arm) => [...arm.joints.map((j) => j.name), arm.gripper.name]);
}

export function rigStateToJointState(state: RigState, model: RigModel, stampS: number, frameId = ''): JointStateMsg {
  return {
    header: { stamp: toRosTime(stampS), frame_id: frameId },
    name: stateNames(model),
    position: Array.from(state.position),
    velocity: Array.from(state.velocity),
    effort: Array.from(state.effort),
  };
}

export interface MeasuredState {
  readonly position: Float64Array;
  readonly velocity: Float64Array;
  readonly effort: Float64Array;
  readonly timeS: number;
  /** Names the message lacked (their entries are NaN). */
  readonly missing: string[];
}

/**
 * Reads a JointState by name into policy order. Extra names are ignored (a ROS stack may publish
 * more joints); missing ones come back NaN and are listed, so the rig can refuse to run on them.
 */
export function jointStateToMeasured(msg: JointStateMsg, model: RigModel, out?: MeasuredState): MeasuredState {
  const names = stateNames(model);
  const position = out?.position ?? new Float64Array(STATE_DIM);
  const velocity = out?.velocity ?? new Float64Array(STATE_DIM);
  const effort = out?.effort ?? new Float64Array(STATE_DIM);
  const missing: string[] = [];
  for (let k = 0; k < STATE_DIM; k++) {
    const i = msg.name.indexOf(names[k]);
    if (i < 0) {
      position[k] = velocity[k] = effort[k] = NaN;
      missing.push(names[k]);
      continue;
    }
    position[k] = Number(msg.position[i]);
    // JointState allows empty velocity/effort arrays.
    velocity[k] = msg.velocity.length > i ? Number(msg.velocity[i]) : 0;
    effort[k] = msg.effort.length > i ? Number(msg.effort[i]) : 0;
  }
  return { position, velocity, effort, timeS: fromRosTime(msg.header.stamp), missing };
}

export interface TrajectoryOptions {
  /** Which arms to include (a ROS stack may drive one arm per topic). Default both. */
  readonly arms?: readonly number[];
  /** Leave grippers out (when they have their own command topic). */
  readonly withoutGrippers?: boolean;
}

/** One-point trajectory to the command's targets, to be reached `timeFromStartS` after the stamp. */
export function rigCommandToJointTrajectory(
  cmd: RigCommand,
  model: RigModel,
  stampS: number,
  timeFromStartS: number,
  options: TrajectoryOptions = {},
): JointTrajectoryMsg {
  const names = stateNames(model);
  const indices: number[] = [];
  for (const a of options.arms ?? [0, 1]) {
    for (let j = 0; j < DOF_PER_ARM; j++) {
      if (options.withoutGrippers && j === DOF_PER_ARM - 1) continue;
      indices.push(a * DOF_PER_ARM + j);
    }
  }
  return {
    header: { stamp: toRosTime(stampS), frame_id: '' },
    joint_names: indices.map((k) => names[k]),
    points: [
      {
        positions: indices.map((k) => cmd.position[k]),
        velocities: cmd.velocity ? indices.map((k) => cmd.velocity![k]) : [],
        accelerations: [],
        effort: cmd.torqueNm ? indices.map((k) => cmd.torqueNm![k]) : [],
        time_from_start: toRosTime(timeFromStartS),
      },
    ],
  };
}
