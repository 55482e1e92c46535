/**
 * What the Foxglove live view publishes, as ROS 2 messages in CDR: the channels (topic, schema
 * name, `ros2msg` schema text) and the encoders that turn the station's latest rig reading into
 * their bytes. The joint states use the very schema and writer the episode files use
 * (src/record/ros2-messages.ts), so a Foxglove layout made for a recorded episode works live.
 *
 *   /joint_states         sensor_msgs/msg/JointState   all 14 entries, policy order (as in the episode files)
 *   /left/joint_states    sensor_msgs/msg/JointState   one arm: its 6 joints and its gripper
 *   /right/joint_states   sensor_msgs/msg/JointState
 *   /tf                   tf2_msgs/msg/TFMessage       table → each arm link (forward kinematics of
 *                                                       the measured joints), and on the emulated cell
 *                                                       table → each object and fixture (a rehearsal:
 *                                                       hardware has no object tracker)
 *
 * Link frames are named as in the rig's URDF (`GET /api/rig/urdf`, `tandem rig urdf`), so
 * Foxglove's 3D panel poses that URDF from /tf.
 */
import { parse } from '@foxglove/rosmsg';
import { MessageWriter } from '@foxglove/rosmsg2-serialization';
import { stateIndex, DOF_PER_ARM, type ArmSide, type RigModel, type RigState } from '../rig/contract.js';
import type { PrivilegedObjectState } from '../policy/contract.js';
import { CDR, SCHEMAS, type RosTime } from '../record/ros2-messages.js';
import { TOPICS, jointNames } from '../record/episode-format.js';
import { rigSnapshotLinks } from '../sim/render/scene-snapshot.js';

/** The station's latest reading of its rig, for a live view: read only (nothing drained or commanded). */
export interface LiveRigReading {
  readonly model: RigModel;
  readonly state: RigState;
  /** How old the state is, seconds (its measurement time on the rig's clock against that clock's now). */
  readonly ageS: number;
  /** Object and fixture poses in the table frame where the rig has them (the emulated cell); else null. */
  readonly bodies: readonly PrivilegedObjectState[] | null;
}

export interface LiveChannel {
  readonly topic: string;
  readonly schemaName: string;
  /** `ros2msg` text: the type's .msg with its dependencies appended (rosbag2's layout). */
  readonly schema: string;
  /** The CDR bytes of this channel's message for a reading stamped `stamp`. */
  encode(reading: LiveRigReading, stamp: RosTime): Uint8Array;
}

/** The frame every pose on /tf is given in: the URDF's root link, the table frame of src/tasks/geometry.ts. */
export const TABLE_FRAME = 'table';

const SEPARATOR = '='.repeat(80);
const msg = (name: string, text: string): string => `${SEPARATOR}\nMSG: ${name}\n${text}`;

/** tf2_msgs/msg/TFMessage with its dependencies, from ROS 2's common_interfaces / geometry2. */
const TF_SCHEMA = [
  'geometry_msgs/TransformStamped[] transforms\n',
  msg(
    'geometry_msgs/TransformStamped',
    'std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/Transform transform\n',
  ),
  msg('std_msgs/Header', 'builtin_interfaces/Time stamp\nstring frame_id\n'),
  msg('builtin_interfaces/Time', 'int32 sec\nuint32 nanosec\n'),
  msg('geometry_msgs/Transform', 'geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n'),
  msg('geometry_msgs/Vector3', 'float64 x\nfloat64 y\nfloat64 z\n'),
  msg('geometry_msgs/Quaternion', 'float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n'),
].join('\n');

export const TF_SCHEMA_NAME = 'tf2_msgs/msg/TFMessage';
const tfWriter = new MessageWriter(parse(TF_SCHEMA, { ros2: true }));

/** Per-arm joint state: the arm's slice of the 14-entry state, names from the model. */
function armChannel(side: ArmSide): LiveChannel {
  return {
    topic: `/${side}/joint_states`,
    schemaName: SCHEMAS.jointState.name,
    schema: SCHEMAS.jointState.text,
    encode({ model, state }, stamp) {
      const arm = model.arms.find((a) => a.side === side);
      if (!arm)
        return CDR.writer.jointState.writeMessage({
          header: { stamp, frame_id: '' },
          name: [],
          position: [],
          velocity: [],
          effort: [],
        });
      const from = stateIndex(side, 0);
      const slice = (v: Float64Array): Float64Array => v.subarray(from, from + DOF_PER_ARM);
      return CDR.writer.jointState.writeMessage({
        header: { stamp, frame_id: '' },
        name: [...arm.joints.map((j) => j.name), arm.gripper.name],
        position: slice(state.position),
        velocity: slice(state.velocity),
        effort: slice(state.effort),
      });
    },
  };
}

interface TransformView {
  header: { stamp: RosTime; frame_id: string };
  child_frame_id: string;
  transform: {
    translation: { x: number; y: number; z: number };
    rotation: { x: number; y: number; z: number; w: number };
  };
}

function transform(stamp: RosTime, child: string, position: readonly number[], q: readonly number[]): TransformView {
  return {
    header: { stamp, frame_id: TABLE_FRAME },
    child_frame_id: child,
    transform: {
      translation: { x: position[0], y: position[1], z: position[2] },
      rotation: { x: q[0], y: q[1], z: q[2], w: q[3] },
    },
  };
}

const tfChannel: LiveChannel = {
  topic: '/tf',
  schemaName: TF_SCHEMA_NAME,
  schema: TF_SCHEMA,
  encode({ model, state, bodies }, stamp) {
    const transforms = rigSnapshotLinks(model, state.position).map((l) =>
      transform(stamp, l.name, l.pose.position, l.pose.quaternion),
    );
    for (const b of bodies ?? []) transforms.push(transform(stamp, b.id, b.position, b.quaternion));
    return tfWriter.writeMessage({ transforms });
  },
};

/** The live view's channels, in advertised order (their index + 1 is their channel id). */
export const LIVE_CHANNELS: readonly LiveChannel[] = [
  {
    topic: TOPICS.jointStates,
    schemaName: SCHEMAS.jointState.name,
    schema: SCHEMAS.jointState.text,
    encode({ model, state }, stamp) {
      return CDR.writer.jointState.writeMessage({
        header: { stamp, frame_id: '' },
        name: jointNames(model),
        position: state.position,
        velocity: state.velocity,
        effort: state.effort,
      });
    },
  },
  armChannel('left'),
  armChannel('right'),
  tfChannel,
];
