/**
 * A stand-in for the ROS 2 graph (rclnodejs cannot run here): topics delivered in-process, and a
 * small "YAM ROS driver" that follows JointTrajectory goals with first-order dynamics, publishes
 * JointState, and damps (freezes) on /yam/emergency_stop — enough to exercise RosRig end to end.
 */
import type { RosNode } from '../../ros/rclnodejs-loader.js';
import { stateNames, toRosTime, type JointStateMsg, type JointTrajectoryMsg } from '../../ros/messages.js';
import type { RigModel } from '../../src/rig/contract.js';

export class InMemoryRosGraph {
  private readonly subs = new Map<string, ((msg: unknown) => void)[]>();
  private readonly services = new Map<string, (req: unknown) => unknown>();
  readonly published: { topic: string; type: string; msg: unknown }[] = [];

  createNode(_name: string): RosNode {
    return {
      createPublisher: (type, topic) => ({
        publish: (msg) => {
          this.published.push({ topic, type, msg });
          for (const cb of this.subs.get(topic) ?? []) cb(structuredClone(msg));
        },
      }),
      createSubscription: (_type, topic, cb) => {
        this.subs.set(topic, [...(this.subs.get(topic) ?? []), cb]);
        return {};
      },
      createClient: (_type, service) => ({
        sendRequest: (req, cb) => {
          const h = this.services.get(service);
          queueMicrotask(() => cb(h ? h(req) : undefined));
        },
      }),
    };
  }

  serve(service: string, handler: (req: unknown) => unknown): void {
    this.services.set(service, handler);
  }
}

export class FakeYamRosDriver {
  readonly names: string[];
  readonly position: Float64Array;
  private target: Float64Array;
  estopped = false;
  /** A driver that stopped publishing (crashed, or its network went): how a ROS 2 stack shows a fault. */
  silent = false;
  private readonly pub: { publish(msg: unknown): void };
  private timeS = 0;
  trajectories = 0;

  constructor(
    graph: InMemoryRosGraph,
    model: RigModel,
    initial: ArrayLike<number>,
    private readonly timeConstantS = 0.03,
  ) {
    this.names = stateNames(model);
    this.position = Float64Array.from(initial);
    this.target = Float64Array.from(initial);
    const node = graph.createNode('fake_yam');
    this.pub = node.createPublisher('sensor_msgs/msg/JointState', '/yam/joint_states');
    node.createSubscription('trajectory_msgs/msg/JointTrajectory', '/yam/joint_command', (m) =>
      this.onTrajectory(m as JointTrajectoryMsg),
    );
    graph.serve('/yam/emergency_stop', () => {
      this.estopped = true;
      this.target = Float64Array.from(this.position);
      return { success: true, message: '' };
    });
  }

  private onTrajectory(m: JointTrajectoryMsg): void {
    this.trajectories++;
    if (this.estopped) return;
    const p = m.points[0];
    m.joint_names.forEach((n, i) => {
      const k = this.names.indexOf(n);
      if (k >= 0) this.target[k] = p.positions[i];
    });
    this.estopped = false;
  }

  /** Advances the arm to time tS and publishes its state. */
  stepTo(tS: number): void {
    const dt = Math.max(0, tS - this.timeS);
    this.timeS = tS;
    const a = 1 - Math.exp(-dt / this.timeConstantS);
    for (let k = 0; k < this.position.length; k++) this.position[k] += (this.target[k] - this.position[k]) * a;
    this.publish();
  }

  publish(): void {
    if (this.silent) return;
    const msg: JointStateMsg = {
      header: { stamp: toRosTime(this.timeS), frame_id: '' },
      name: this.names,
      position: Array.from(this.position),
      velocity: this.names.map(() => 0),
      effort: this.names.map(() => 0),
    };
    this.pub.publish(msg);
  }
}
