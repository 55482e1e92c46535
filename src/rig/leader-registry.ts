/**
 * Leader selection by its `--leader` spelling, as rigs are chosen by config `type` (registry.ts):
 * `KIND` or `KIND:ARGUMENT` (e.g. `emulated-yam`, `yam:damiao:/dev/ttyUSB0`, `gello:/dev/ttyUSB0`).
 * The composition root (src/app) registers every kind it knows — the hardware leaders from
 * drivers/leaders, their emulators from drivers/leaders/emulators — so production code never
 * branches on "emulated", and this module imports no driver.
 */
import type { ArmSide, Clock } from './contract.js';
import type { Leader } from './leader.js';

/** How an emulated leader's handles move: an operator's hand, scripted or replayed (drivers/leaders/emulators/operator-hand.ts). */
export interface LeaderHand {
  pose(t: number, out: Float64Array, v: Float64Array): void;
  buttons(t: number, arm: ArmSide): number;
}

/** What every leader factory gets besides its spelling. */
export interface LeaderContext {
  readonly clock: Clock;
  /** The hand an emulated leader plays; hardware ignores it (a person moves it). */
  readonly hand?: LeaderHand;
}

/** The emulator behind an emulated leader: what the station needs of it (tests cast to the full emulator to inject faults). */
export interface LeaderEmulator {
  /** (Re)starts the hand's script now, once the rig and the leader are up. */
  startHand(): void;
}

/** A leader and, for the emulated ones, the emulator behind it. */
export interface LeaderSetup {
  readonly leader: Leader;
  readonly spec: string;
  readonly emulated?: LeaderEmulator;
}

/** A `--leader` spelling no registered kind accepts: one sentence for the operator. */
export class LeaderSpecError extends Error {
  override readonly name = 'LeaderSpecError';
}

export interface LeaderRegistration {
  readonly kind: string;
  /** How to spell it, for `--help` and the one sentence an unknown spelling gets, e.g. `gello:PORT[,PORT]`. */
  readonly usage: string;
  /** Whether the kind takes `:ARGUMENT` (ports) or stands alone. */
  readonly takesArgument: boolean;
  readonly create: (argument: string, spec: string, context: LeaderContext) => LeaderSetup;
}

export class LeaderRegistry {
  private readonly entries = new Map<string, LeaderRegistration>();

  register(entry: LeaderRegistration): this {
    if (!/^[a-z][a-z0-9-]*$/.test(entry.kind))
      throw new Error(`A leader kind must be lower-case words joined by '-', not '${entry.kind}'.`);
    if (this.entries.has(entry.kind)) throw new Error(`A leader kind '${entry.kind}' is already registered.`);
    this.entries.set(entry.kind, entry);
    return this;
  }

  kinds(): LeaderRegistration[] {
    return [...this.entries.values()];
  }

  /** The leader `spec` names, configured-but-closed; an unknown or malformed spelling gets one sentence listing the known ones. */
  create(spec: string, context: LeaderContext): LeaderSetup {
    const colon = spec.indexOf(':');
    const kind = colon < 0 ? spec : spec.slice(0, colon);
    const argument = colon < 0 ? undefined : spec.slice(colon + 1);
    const entry = this.entries.get(kind);
    if (!entry || entry.takesArgument !== (argument !== undefined) || argument === '')
      throw new LeaderSpecError(`--leader must be ${this.known()}, not '${spec}'.`);
    return entry.create(argument ?? '', spec, context);
  }

  private known(): string {
    const usages = [...this.entries.values()].map((e) => e.usage);
    if (usages.length === 0) return '(no leader registered)';
    return usages.length === 1 ? usages[0] : `${usages.slice(0, -1).join(', ')} or ${usages[usages.length - 1]}`;
  }
}
