/**
 * RosRig: a YAM whose motors a ROS 2 stack drives (e.g. the third-party Jazzy wrapper), through the
 * Rig contract. State comes from a JointState topic; commands go out as one-point JointTrajectory
 * messages, only after C's SafetySupervisor has clamped them; the stack's emergency_stop service
 * (std_srvs/Trigger) is how this rig damps. The node is passed in (see rclnodejs-loader.ts), so the
 * bridge is type-checked and unit-tested without ROS.
 */
import {
  ARM_SIDES,
  RigError,
  type Clock,
  type Rig,
  type RigCommand,
  type RigFault,
  type RigModel,
  type RigState,
  type SafetyEvent,
} from '../src/rig/contract.js';
import { RealtimeClock } from '../src/rig/clocks.js';
import { SafetySupervisor, type SafetyOptions } from '../src/rig/safety.js';
import { yamRigModel } from '../src/rig/yam.js';
import {
  JOINT_STATE_TYPE,
  JOINT_TRAJECTORY_TYPE,
  TRIGGER_TYPE,
  jointStateToMeasured,
  rigCommandToJointTrajectory,
  type JointStateMsg,
  type MeasuredState,
} from './messages.js';
import type { RosNode } from './rclnodejs-loader.js';

export interface RosRigTopics {
  readonly jointStates: string;
  readonly jointCommand: string;
  readonly emergencyStop: string;
}

export const YAM_ROS_TOPICS: RosRigTopics = {
  jointStates: '/yam/joint_states',
  jointCommand: '/yam/joint_command',
  emergencyStop: '/yam/emergency_stop',
};

export interface RosRigOptions {
  readonly node: RosNode;
  readonly model?: RigModel;
  readonly clock?: Clock;
  readonly safety?: SafetyOptions;
  readonly topics?: Partial<RosRigTopics>;
  /** No JointState for this long while running is a fault. Default 200 ms (the wrapper publishes at 250 Hz). */
  readonly stateTimeoutMs?: number;
  /** How long configure() waits for the first JointState. Default 2000 ms. */
  readonly firstStateTimeoutMs?: number;
}

export class RosRig implements Rig {
  readonly model: RigModel;
  private readonly clock: Clock;
  private readonly supervisor: SafetySupervisor;
  private readonly topics: RosRigTopics;
  private readonly publisher: { publish(msg: unknown): void };
  private readonly estopClient: ReturnType<RosNode['createClient']>;
  private measured: MeasuredState | undefined;
  private lastStateS = NaN;
  private faults: readonly RigFault[] = [];
  private readonly stateTimeoutS: number;
  private readonly periodS: number;
  private damping = false;
  private readonly extraEvents: SafetyEvent[] = [];

  constructor(private readonly options: RosRigOptions) {
    this.model = options.model ?? yamRigModel();
    this.clock = options.clock ?? new RealtimeClock();
    this.supervisor = new SafetySupervisor(this.model, options.safety);
    this.topics = { ...YAM_ROS_TOPICS, ...options.topics };
    this.stateTimeoutS = (options.stateTimeoutMs ?? 200) / 1000;
    this.periodS = options.safety?.controlPeriodS ?? 1 / 250;
    const node = options.node;
    node.createSubscription(JOINT_STATE_TYPE, this.topics.jointStates, (msg) =>
      this.onJointState(msg as JointStateMsg),
    );
    this.publisher = node.createPublisher(JOINT_TRAJECTORY_TYPE, this.topics.jointCommand);
    this.estopClient = node.createClient(TRIGGER_TYPE, this.topics.emergencyStop);
  }

  private onJointState(msg: JointStateMsg): void {
    this.measured = jointStateToMeasured(msg, this.model, this.measured);
    this.lastStateS = this.clock.nowS();
  }

  async configure(): Promise<void> {
    const timeoutS = (this.options.firstStateTimeoutMs ?? 2000) / 1000;
    // Wall time, not the rig clock: the messages come from outside, and a stepped clock would never time out.
    const untilMs = performance.now() + timeoutS * 1000;
    while (!this.measured && performance.now() < untilMs) await new Promise((r) => setTimeout(r, 10));
    if (!this.measured) {
      throw this.refuse({
        kind: 'no-reply',
        message: `No JointState on ${this.topics.jointStates} within ${timeoutS} s; is the YAM ROS 2 driver running and is ROS_DOMAIN_ID right?`,
      });
    }
    if (this.measured.missing.length > 0) {
      throw this.refuse({
        kind: 'config-mismatch',
        message: `The JointState on ${this.topics.jointStates} lacks ${this.measured.missing.join(', ')}; map the ROS joint names to the rig model's before running.`,
      });
    }
    this.supervisor.configure();
  }

  async activate(): Promise<void> {
    if (this.supervisor.mode === 'unconfigured') await this.configure();
    const now = this.clock.nowS();
    this.faults = this.collectFaults(now);
    this.supervisor.activate(this.position(), this.faults, now);
    this.damping = false;
    this.drive();
  }

  read(): RigState {
    const m = this.measured;
    return {
      timeS: this.clock.nowS(),
      mode: this.supervisor.mode,
      position: m ? Float64Array.from(m.position) : new Float64Array(14),
      velocity: m ? Float64Array.from(m.velocity) : new Float64Array(14),
      effort: m ? Float64Array.from(m.effort) : new Float64Array(14),
      faults: this.faults,
    };
  }

  write(cmd: RigCommand): RigCommand {
    return this.supervisor.write(cmd, this.clock.nowS());
  }

  tick(): void {
    const now = this.clock.nowS();
    if (this.supervisor.mode !== 'unconfigured' && this.supervisor.mode !== 'configured')
      this.faults = this.collectFaults(now);
    this.supervisor.tick(this.position(), this.faults, now);
    this.drive();
  }

  hold(): void {
    this.supervisor.hold(this.clock.nowS());
    this.drive();
  }

  estop(reason: string): void {
    this.supervisor.estop(reason, this.clock.nowS());
    this.callEmergencyStop();
    this.drive();
  }

  async deactivate(): Promise<void> {
    this.supervisor.deactivate(this.clock.nowS());
    this.drive();
  }

  takeSafetyEvents(): SafetyEvent[] {
    const e = this.supervisor.takeEvents();
    if (this.extraEvents.length === 0) return e;
    const all = [...this.extraEvents, ...e];
    this.extraEvents.length = 0;
    return all;
  }

  private position(): Float64Array {
    return this.measured?.position ?? new Float64Array(14);
  }

  private collectFaults(now: number): readonly RigFault[] {
    const silentS = now - this.lastStateS;
    if (!(silentS <= this.stateTimeoutS)) {
      return [
        {
          kind: 'no-reply',
          message: `No JointState on ${this.topics.jointStates} for ${Number.isFinite(silentS) ? Math.round(silentS * 1000) : '∞'} ms; the ROS 2 driver or the network stopped.`,
        },
      ];
    }
    return NONE;
  }

  /** Publishes the tracking arms' targets; damping means the stack's emergency stop. */
  private drive(): void {
    const arms: number[] = [];
    let damp = false;
    ARM_SIDES.forEach((side, a) => {
      const d = this.supervisor.drive(side);
      if (d === 'track') arms.push(a);
      else if (d === 'damp') damp = true;
    });
    if (arms.length > 0) {
      this.publisher.publish(
        rigCommandToJointTrajectory(this.supervisor.output, this.model, this.clock.nowS(), 2 * this.periodS, { arms }),
      );
    }
    if (damp && !this.damping) this.callEmergencyStop();
    this.damping = damp;
  }

  private callEmergencyStop(): void {
    this.estopClient.sendRequest({}, (res) => {
      const r = res as { success?: boolean; message?: string } | undefined;
      if (r && r.success === false) {
        this.extraEvents.push({
          timeS: this.clock.nowS(),
          kind: 'estop',
          message: `The ROS 2 driver refused ${this.topics.emergencyStop}: ${r.message || 'no reason given'}. Use the hardware e-stop.`,
        });
      }
    });
  }

  private refuse(fault: RigFault): RigError {
    this.extraEvents.push({ timeS: this.clock.nowS(), kind: 'activate-refused', message: fault.message });
    return new RigError(fault.message, fault);
  }
}

const NONE: readonly RigFault[] = [];
