/**
 * Rig selection by configuration `type`, after ros2_control's plugin choice: the composition root
 * (src/app) registers every factory it knows — `mirror` here, `yam-can` from drivers/, `sim` from
 * src/sim, `ros` from ros/ — and the station creates whatever its config names. Production code
 * never branches on "sim", and this module imports no driver.
 */
import { RigError, type Clock, type CellInterlock, type Rig, type RigModel } from './contract.js';
import { MirrorRig, parseMirrorConfig } from './mirror-rig.js';
import { yamRigModel } from './yam.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';

/** A rig config: `type` picks the factory; the rest is the factory's to check. */
export interface RigConfig {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** What every factory gets besides its config. */
export interface RigContext {
  readonly clock: Clock;
  /** The rig model with the station's base poses; default the YAM pair at the default poses. */
  readonly model?: RigModel;
  /** Aborted when the station shuts down while a factory is still connecting. */
  readonly signal?: AbortSignal;
  /**
   * What the operator is about to place on the table. Hardware ignores it; a rig that is a world
   * of its own (the emulated cell) builds its table from it.
   */
  readonly table?: { readonly task: TaskDefinition; readonly layout: Layout; readonly placementSeed?: number };
  /**
   * The cell's interlock (drivers/cell-io's PLC client), handed to the rig's safety supervisor:
   * every factory that builds a supervisor passes it on (SafetyOptions.interlock).
   */
  readonly interlock?: CellInterlock;
}

export type RigFactory = (config: RigConfig, context: RigContext) => Rig | Promise<Rig>;

export interface RigRegistration {
  readonly type: string;
  /** One line for `--help` and error messages. */
  readonly description: string;
  readonly create: RigFactory;
}

export class RigRegistry {
  private readonly entries = new Map<string, RigRegistration>();

  register(type: string, description: string, create: RigFactory): this {
    if (!/^[a-z][a-z0-9-]*$/.test(type))
      throw new Error(`A rig type must be lower-case words joined by '-', not '${type}'.`);
    if (this.entries.has(type)) throw new Error(`A rig type '${type}' is already registered.`);
    this.entries.set(type, { type, description, create });
    return this;
  }

  has(type: string): boolean {
    return this.entries.has(type);
  }

  types(): RigRegistration[] {
    return [...this.entries.values()];
  }

  /** Creates the rig the config names; unknown or missing types get one sentence listing the known ones. */
  async create(config: unknown, context: RigContext): Promise<Rig> {
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      throw configError(`A rig config must be an object with a 'type' (one of: ${this.known()}).`);
    }
    const type = (config as { type?: unknown }).type;
    if (typeof type !== 'string') throw configError(`The rig config has no 'type'; use one of: ${this.known()}.`);
    const entry = this.entries.get(type);
    if (!entry) throw configError(`Unknown rig type '${type}'; this station knows: ${this.known()}.`);
    return entry.create(config as RigConfig, context);
  }

  private known(): string {
    return this.entries.size === 0 ? '(none registered)' : [...this.entries.keys()].join(', ');
  }
}

/** The mirror rig factory (`{type: 'mirror', lagS?, initialPosition?, holdAfterMs?, dampAfterMs?}`). */
export function registerMirrorRig(registry: RigRegistry): RigRegistry {
  return registry.register(
    'mirror',
    'no hardware: commands mirrored to state through the safety supervisor (like ros2_control mock)',
    (config, context) => {
      const c = parseMirrorConfig(config);
      return new MirrorRig({
        model: context.model ?? yamRigModel(),
        clock: context.clock,
        lagS: c.lagS,
        initialPosition: c.initialPosition,
        safety: { holdAfterMs: c.holdAfterMs, dampAfterMs: c.dampAfterMs, interlock: context.interlock },
      });
    },
  );
}

/** A registry holding the rigs src/rig itself provides; the composition root adds drivers and sim. */
export function createRigRegistry(): RigRegistry {
  return registerMirrorRig(new RigRegistry());
}

function configError(message: string): RigError {
  return new RigError(message, { kind: 'config-mismatch', message });
}
