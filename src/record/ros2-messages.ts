/**
 * The ROS 2 messages an episode file carries, as rosbag2 writes them: `ros2msg` schema text (the
 * type's .msg with every dependency appended after a line of 80 '=' and `MSG: pkg/Type`) and CDR
 * bytes through @foxglove/rosmsg2-serialization. The standard types (JointState, CompressedImage)
 * are the definitions from ROS 2's common_interfaces; tandem's own event type is documented here
 * and in docs/recording.md.
 */
import { parse } from '@foxglove/rosmsg';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';

const TIME = 'int32 sec\nuint32 nanosec\n';
const HEADER = 'builtin_interfaces/Time stamp\nstring frame_id\n';

const SEPARATOR = '='.repeat(80);

function withDependencies(main: string, deps: readonly [string, string][]): string {
  return [main, ...deps.map(([name, text]) => `${SEPARATOR}\nMSG: ${name}\n${text}`)].join('\n');
}

const HEADER_DEPS: [string, string][] = [
  ['std_msgs/Header', HEADER],
  ['builtin_interfaces/Time', TIME],
];

/**
 * tandem_msgs/msg/EpisodeEvent — one thing that happened during an episode, on `/tandem/events`.
 * `kind` is one of EVENT_KINDS (safety, chunk, camera-lost, camera-summary, mark, phase, recorder);
 * `source` names what it is about (a joint like "left/2", a camera, "operator", "policy");
 * `message` is the sentence an operator reads; `detail_json` carries the structured fields.
 */
const EVENT = 'std_msgs/Header header\nstring kind\nstring source\nstring message\nstring detail_json\n';

/**
 * tandem_msgs/msg/StepTiming — one control step of a policy rollout, on `/tandem/step_timing`:
 * which chunk (and so which observation) its action came from, how long ago that observation read
 * the state when this step's command went out, and per camera the age of the frame it used and
 * the camera's dropped frames so far (parallel arrays, in the policy's camera order).
 */
const STEP_TIMING =
  'std_msgs/Header header\nuint32 step\nuint32 chunk_index\nfloat64 observation_to_action_s\nstring[] camera\nfloat64[] frame_age_s\nuint32[] dropped\n';

/**
 * tandem_msgs/msg/RigCycle — one cycle of a rig thread's motor loop (250 Hz by default), on
 * `/tandem/rig_cycles`: its number (consecutive: a gap is a cycle the recording lacks), the rig's
 * mode, the state it measured and the command its safety supervisor sent, 14 entries each in
 * policy order (the file's joint_names); applied_velocity / applied_effort are empty when the
 * cycle sent no feed-forward.
 */
const RIG_CYCLE =
  'std_msgs/Header header\nuint32 cycle\nstring mode\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\nfloat64[] applied_position\nfloat64[] applied_velocity\nfloat64[] applied_effort\n';

export const SCHEMAS = {
  jointState: {
    name: 'sensor_msgs/msg/JointState',
    text: withDependencies(
      'std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n',
      HEADER_DEPS,
    ),
  },
  compressedImage: {
    name: 'sensor_msgs/msg/CompressedImage',
    text: withDependencies('std_msgs/Header header\n\nstring format\nuint8[] data\n', HEADER_DEPS),
  },
  event: {
    name: 'tandem_msgs/msg/EpisodeEvent',
    text: withDependencies(EVENT, HEADER_DEPS),
  },
  stepTiming: {
    name: 'tandem_msgs/msg/StepTiming',
    text: withDependencies(STEP_TIMING, HEADER_DEPS),
  },
  rigCycle: {
    name: 'tandem_msgs/msg/RigCycle',
    text: withDependencies(RIG_CYCLE, HEADER_DEPS),
  },
} as const;

export type SchemaKey = keyof typeof SCHEMAS;

export interface RosTime {
  sec: number;
  nanosec: number;
}

export interface RosHeader {
  stamp: RosTime;
  frame_id: string;
}

export interface JointStateMessage {
  header: RosHeader;
  name: string[];
  position: Float64Array | number[];
  velocity: Float64Array | number[];
  effort: Float64Array | number[];
}

export interface CompressedImageMessage {
  header: RosHeader;
  format: string;
  data: Uint8Array;
}

export interface EpisodeEventMessage {
  header: RosHeader;
  kind: string;
  source: string;
  message: string;
  detail_json: string;
}

function definitions(key: SchemaKey) {
  return parse(SCHEMAS[key].text, { ros2: true });
}

/** Writers and readers for the schemas, built once. */
export const CDR = {
  writer: {
    jointState: new MessageWriter(definitions('jointState')),
    compressedImage: new MessageWriter(definitions('compressedImage')),
    event: new MessageWriter(definitions('event')),
    stepTiming: new MessageWriter(definitions('stepTiming')),
    rigCycle: new MessageWriter(definitions('rigCycle')),
  },
  reader: {
    jointState: new MessageReader(definitions('jointState')),
    compressedImage: new MessageReader(definitions('compressedImage')),
    event: new MessageReader(definitions('event')),
    stepTiming: new MessageReader(definitions('stepTiming')),
    rigCycle: new MessageReader(definitions('rigCycle')),
  },
} as const;

/** The schema key of a schema name written by tandem, or undefined for someone else's type. */
export function schemaKeyOf(name: string): SchemaKey | undefined {
  return (Object.keys(SCHEMAS) as SchemaKey[]).find((k) => SCHEMAS[k].name === name);
}

/** Nanoseconds (bigint) → ROS time. */
export function rosTime(ns: bigint): RosTime {
  return { sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) };
}

/**
 * rosbag2's `offered_qos_profiles` channel metadata (YAML) for a reliable, volatile publisher
 * keeping the last `depth` messages — what a sensor driver offers. Without it, `ros2 bag play`
 * guesses the QoS. Numbers are rmw enums: history 1 = keep last, reliability 1 = reliable,
 * durability 2 = volatile, liveliness 1 = automatic; "infinite" durations as rosbag2 writes them.
 */
export function offeredQosYaml(depth = 10): string {
  const infinite = '    sec: 9223372036\n    nsec: 854775807\n';
  return (
    `- history: 1\n  depth: ${depth}\n  reliability: 1\n  durability: 2\n` +
    `  deadline:\n${infinite}  lifespan:\n${infinite}  liveliness: 1\n  liveliness_lease_duration:\n${infinite}` +
    '  avoid_ros_namespace_conventions: false\n'
  );
}
