/**
 * MirrorRig: a rig with no hardware, like ros2_control's mock system — commands become state after
 * the safety supervisor, through a first-order lag. Chosen by configuration (`{type: 'mirror'}`),
 * never by `if (sim)`. Useful for the station UI without hardware, for rollout plumbing, and as the
 * reference implementation the shared contract suite runs against.
 *
 * Damped arms keep their position (there is no gravity here); 'off' arms do not move.
 */
import {
  ARM_SIDES,
  DOF_PER_ARM,
  RigError,
  STATE_DIM,
  type Clock,
  type Rig,
  type RigCommand,
  type RigFault,
  type RigMode,
  type RigModel,
  type RigState,
  type SafetyEvent,
} from './contract.js';
import { DEFAULT_DAMP_AFTER_MS, DEFAULT_HOLD_AFTER_MS, SafetySupervisor, type SafetyOptions } from './safety.js';

export interface MirrorRigOptions {
  readonly model: RigModel;
  readonly clock: Clock;
  /** Time constant of the command → state lag, seconds. Default 0.02. */
  readonly lagS?: number;
  /** Pose at start-up, policy order; default all joints 0 (home) and grippers 0.5. */
  readonly initialPosition?: ArrayLike<number>;
  readonly safety?: SafetyOptions;
}

export const DEFAULT_MIRROR_LAG_S = 0.02;

export class MirrorRig implements Rig {
  readonly model: RigModel;
  private readonly clock: Clock;
  private readonly lagS: number;
  private readonly supervisor: SafetySupervisor;
  private readonly position = new Float64Array(STATE_DIM);
  private readonly velocity = new Float64Array(STATE_DIM);
  private readonly effort = new Float64Array(STATE_DIM);
  private faults: RigFault[] = [];
  private lastTickS: number;
  private readonly state: {
    timeS: number;
    mode: RigMode;
    position: Float64Array;
    velocity: Float64Array;
    effort: Float64Array;
    faults: readonly RigFault[];
  };

  constructor(options: MirrorRigOptions) {
    this.model = options.model;
    this.clock = options.clock;
    this.lagS = options.lagS ?? DEFAULT_MIRROR_LAG_S;
    if (!(this.lagS > 0))
      throw new RangeError(`The mirror rig's lag must be a positive number of seconds, not ${this.lagS}.`);
    this.supervisor = new SafetySupervisor(options.model, options.safety);
    if (options.initialPosition) {
      if (options.initialPosition.length !== STATE_DIM)
        throw new RangeError(
          `The mirror rig's initial position needs ${STATE_DIM} entries, not ${options.initialPosition.length}.`,
        );
      this.position.set(Array.from(options.initialPosition));
    } else {
      for (let a = 0; a < ARM_SIDES.length; a++) this.position[a * DOF_PER_ARM + DOF_PER_ARM - 1] = 0.5;
    }
    this.lastTickS = this.clock.nowS();
    this.state = {
      timeS: this.lastTickS,
      mode: 'unconfigured',
      position: this.position,
      velocity: this.velocity,
      effort: this.effort,
      faults: this.faults,
    };
  }

  async configure(): Promise<void> {
    this.supervisor.configure();
    this.supervisor.tick(this.position, this.faults, this.clock.nowS());
  }

  async activate(): Promise<void> {
    const now = this.clock.nowS();
    this.supervisor.activate(this.position, this.faults, now);
    this.lastTickS = now;
  }

  /** The latest state. Buffers are reused between calls: copy what you keep. */
  read(): RigState {
    this.state.timeS = this.lastTickS;
    this.state.mode = this.supervisor.mode;
    this.state.faults = this.faults;
    return this.state;
  }

  write(cmd: RigCommand): RigCommand {
    return this.supervisor.write(cmd, this.clock.nowS());
  }

  tick(): void {
    const now = this.clock.nowS();
    const dt = now - this.lastTickS;
    this.supervisor.tick(this.position, this.faults, now);
    if (dt <= 0) return;
    const alpha = 1 - Math.exp(-dt / this.lagS);
    const out = this.supervisor.output;
    for (let a = 0; a < ARM_SIDES.length; a++) {
      const drive = this.supervisor.drive(ARM_SIDES[a]);
      for (let k = a * DOF_PER_ARM; k < (a + 1) * DOF_PER_ARM; k++) {
        if (drive === 'track') {
          const next = this.position[k] + (out.position[k] - this.position[k]) * alpha;
          this.velocity[k] = (next - this.position[k]) / dt;
          this.position[k] = next;
          this.effort[k] = out.torqueNm[k];
        } else {
          this.velocity[k] = 0;
          this.effort[k] = 0;
        }
      }
    }
    this.lastTickS = now;
  }

  hold(): void {
    this.supervisor.hold(this.clock.nowS());
  }

  estop(reason: string): void {
    this.supervisor.estop(reason, this.clock.nowS());
  }

  async deactivate(): Promise<void> {
    this.supervisor.deactivate(this.clock.nowS());
  }

  takeSafetyEvents(): SafetyEvent[] {
    return this.supervisor.takeEvents();
  }

  /** Test/demo hook: report a fault as a driver would (e.g. a motor status nibble). */
  injectFault(fault: RigFault): void {
    this.faults = [...this.faults, fault];
  }

  clearFaults(): void {
    this.faults = [];
  }
}

/** Config for `{type: 'mirror'}`. */
export interface MirrorRigConfig {
  readonly type: 'mirror';
  readonly lagS?: number;
  readonly initialPosition?: readonly number[];
  readonly holdAfterMs?: number;
  readonly dampAfterMs?: number;
}

/** Checks an untrusted mirror config, with one sentence per problem. */
export function parseMirrorConfig(config: Record<string, unknown>): MirrorRigConfig {
  const known = new Set(['type', 'lagS', 'initialPosition', 'holdAfterMs', 'dampAfterMs']);
  for (const key of Object.keys(config)) {
    if (!known.has(key))
      throw configError(`The mirror rig config has an unknown field '${key}'; known fields: ${[...known].join(', ')}.`);
  }
  const num = (key: string): number | undefined => {
    const v = config[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw configError(`The mirror rig's ${key} must be a positive number, not ${JSON.stringify(v)}.`);
    return v;
  };
  const ip = config.initialPosition;
  if (
    ip !== undefined &&
    (!Array.isArray(ip) || ip.length !== STATE_DIM || ip.some((x) => typeof x !== 'number' || !Number.isFinite(x)))
  ) {
    throw configError(`The mirror rig's initialPosition must be ${STATE_DIM} numbers in policy order.`);
  }
  const holdAfterMs = num('holdAfterMs');
  const dampAfterMs = num('dampAfterMs');
  if ((dampAfterMs ?? DEFAULT_DAMP_AFTER_MS) < (holdAfterMs ?? DEFAULT_HOLD_AFTER_MS)) {
    throw configError(`The mirror rig's dampAfterMs must not be shorter than its holdAfterMs.`);
  }
  return { type: 'mirror', lagS: num('lagS'), initialPosition: ip as number[] | undefined, holdAfterMs, dampAfterMs };
}

function configError(message: string): RigError {
  return new RigError(message, { kind: 'config-mismatch', message });
}
