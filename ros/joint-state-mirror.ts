/**
 * Mirrors any rig's state to ROS 2 as sensor_msgs/msg/JointState: wrap the rig, and every control
 * cycle's tick() also publishes. A decorator rather than a timer of its own, because the control
 * loop owns timing.
 */
import type { Rig, RigCommand, RigState, SafetyEvent } from '../src/rig/contract.js';
import { JOINT_STATE_TYPE, rigStateToJointState } from './messages.js';
import type { RosNode } from './rclnodejs-loader.js';

export interface MirrorOptions {
  readonly topic?: string;
  /** Publish every Nth tick (250 Hz loop, every 1 → 250 Hz). Default 1. */
  readonly everyNthTick?: number;
  readonly frameId?: string;
}

export class JointStateMirror implements Rig {
  private readonly publisher: { publish(msg: unknown): void };
  private ticks = 0;
  private readonly every: number;
  published = 0;

  constructor(
    private readonly rig: Rig,
    node: RosNode,
    private readonly options: MirrorOptions = {},
  ) {
    this.publisher = node.createPublisher(JOINT_STATE_TYPE, options.topic ?? '/tandem/joint_states');
    this.every = Math.max(1, Math.floor(options.everyNthTick ?? 1));
  }

  get model() {
    return this.rig.model;
  }
  configure(): Promise<void> {
    return this.rig.configure();
  }
  activate(): Promise<void> {
    return this.rig.activate();
  }
  read(): RigState {
    return this.rig.read();
  }
  write(cmd: RigCommand): RigCommand {
    return this.rig.write(cmd);
  }
  tick(): void {
    this.rig.tick();
    if (this.ticks++ % this.every !== 0) return;
    const s = this.rig.read();
    this.publisher.publish(rigStateToJointState(s, this.rig.model, s.timeS, this.options.frameId ?? ''));
    this.published++;
  }
  hold(): void {
    this.rig.hold();
  }
  estop(reason: string): void {
    this.rig.estop(reason);
  }
  deactivate(): Promise<void> {
    return this.rig.deactivate();
  }
  takeSafetyEvents(): SafetyEvent[] {
    return this.rig.takeSafetyEvents();
  }
}
