/**
 * Registry entries for the YAM over CAN, for the composition root (src/app) to add:
 *   {type: 'yam-can', transport: 'slcan'|'damiao', ports: {left?: PATH, right?: PATH}, baudRate?, replyDeadlineMs?,
 *    gripperLimits?: {left?: {closedRad, openRad}, right?: …}}
 * The emulated rigs (the station's embedded default) are registered from src/emulated-cell, so this
 * folder never ships its stand-in. The rig is returned configured-but-closed: the station calls
 * configure() and activate().
 *
 * 'yam-can' runs in its own thread (rig-thread-worker.ts): the serial ports, YamCanRig, its safety
 * supervisor and the 250 Hz motor loop keep going whatever the station's main thread is doing; the
 * station holds a RigThreadProxy with the same Rig contract.
 */
import { ARM_SIDES, RigError, type ArmSide, type RigModel } from '../../src/rig/contract.js';
import type { RigConfig, RigContext, RigRegistry } from '../../src/rig/registry.js';
import { CAN_TRANSPORTS, type CanTransport } from '../can/bus.js';
import { SerialCanBus } from '../can/serial-can-bus.js';
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { YamCanRig } from './yam-can-rig.js';
import type { GripperLimits } from './gripper-calibration.js';
import { DEFAULT_CONTROL_RATE_HZ } from '../../src/rig/control-loop.js';
import { RigThreadProxy } from '../../src/rig/rig-thread-proxy.js';
import { yamRigModel } from '../../src/rig/yam.js';

/** A rig config value the factory cannot use: one sentence, as a config-mismatch RigError. */
export function rigConfigError(message: string): RigError {
  return new RigError(message, { kind: 'config-mismatch', message });
}

/** The config's 'transport' (slcan or damiao), or `fallback` when it names none. */
export function transportOf(config: RigConfig, fallback?: CanTransport): CanTransport {
  const t = config.transport ?? fallback;
  if (typeof t !== 'string' || !(CAN_TRANSPORTS as readonly string[]).includes(t)) {
    throw rigConfigError(
      `The ${config.type} rig config needs 'transport' set to ${CAN_TRANSPORTS.join(' or ')}, not ${JSON.stringify(t)}.`,
    );
  }
  return t as CanTransport;
}

/** An optional number within [min, max] from the config, or one sentence. */
export function optionalNumber(config: RigConfig, key: string, min: number, max: number): number | undefined {
  const v = config[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
    throw rigConfigError(
      `The ${config.type} rig config's '${key}' must be a number from ${min} to ${max}, not ${JSON.stringify(v)}.`,
    );
  return v;
}

/** `gripperLimits: {left?: {closedRad, openRad}, …}` — the app fills it from the latest 'yam-gripper-limits' calibrations. */
function gripperLimitsOf(config: RigConfig): Partial<Record<ArmSide, GripperLimits>> | undefined {
  const g = config.gripperLimits;
  if (g === undefined) return undefined;
  const out: Partial<Record<ArmSide, GripperLimits>> = {};
  for (const side of ARM_SIDES) {
    const v = (g as Record<string, unknown> | null)?.[side] as { closedRad?: unknown; openRad?: unknown } | undefined;
    if (v === undefined) continue;
    if (
      typeof v.closedRad !== 'number' ||
      typeof v.openRad !== 'number' ||
      !Number.isFinite(v.closedRad) ||
      !Number.isFinite(v.openRad) ||
      Math.abs(v.openRad - v.closedRad) < 1
    ) {
      throw rigConfigError(
        `The ${config.type} rig config's gripperLimits.${side} needs closedRad and openRad at least 1 rad apart (from 'tandem rig calibrate-gripper').`,
      );
    }
    out[side] = { closedRad: v.closedRad, openRad: v.openRad };
  }
  return out;
}

/** What a bring-up command sets beside the config: the supervisor's period and whether the buses reconnect. */
export interface YamCanThreadExtras {
  readonly controlPeriodS?: number;
  /** 0: an unplugged adapter ends the run (bring-up commands); default: reconnect. */
  readonly reconnectIntervalMs?: number;
}

/** What the main thread sends (createThreadedYamCanRig) to the rig thread (rig-thread-worker.ts). */
export interface YamRigThreadInit {
  readonly config: RigConfig;
  readonly model: RigModel;
  readonly extras: YamCanThreadExtras;
}

/** `binding`: how the ports are opened (default the native one; the rig thread passes drivers/can/tty-binding). */
export function createYamCanRig(
  config: RigConfig,
  context: RigContext,
  extras: YamCanThreadExtras = {},
  binding?: BindingInterface,
): YamCanRig {
  const transport = transportOf(config);
  const ports = config.ports;
  if (ports === null || typeof ports !== 'object')
    throw rigConfigError(
      `The yam-can rig config needs 'ports', e.g. {"left": "/dev/ttyACM0", "right": "/dev/ttyACM1"}.`,
    );
  const buses: Partial<Record<ArmSide, SerialCanBus>> = {};
  for (const side of ARM_SIDES) {
    const p = (ports as Record<string, unknown>)[side];
    if (p === undefined) continue;
    if (typeof p !== 'string' || p.length === 0)
      throw rigConfigError(`The yam-can rig config's ports.${side} must be a serial device path.`);
    buses[side] = new SerialCanBus({
      transport,
      path: p,
      baudRate: optionalNumber(config, 'baudRate', 9600, 12_000_000),
      ...(extras.reconnectIntervalMs !== undefined ? { reconnectIntervalMs: extras.reconnectIntervalMs } : {}),
      ...(binding ? { binding } : {}),
    });
  }
  if (!buses.left && !buses.right)
    throw rigConfigError(`The yam-can rig config's 'ports' names no arm; give ports.left and/or ports.right.`);
  return new YamCanRig({
    buses,
    model: context.model,
    clock: context.clock,
    safety: {
      interlock: context.interlock,
      ...(extras.controlPeriodS ? { controlPeriodS: extras.controlPeriodS } : {}),
    },
    replyDeadlineMs: optionalNumber(config, 'replyDeadlineMs', 5, 350),
    gripperLimits: gripperLimitsOf(config),
  });
}

/**
 * The YAM in its own rig thread: the config is checked here (one sentence on the main thread, as
 * in-thread), then the thread opens the ports and runs the motor loop at `rateHz`.
 */
export function createThreadedYamCanRig(
  config: RigConfig,
  context: RigContext,
  options: { rateHz?: number; cycleRingCapacity?: number } & YamCanThreadExtras = {},
): RigThreadProxy {
  const rateHz = options.rateHz ?? DEFAULT_CONTROL_RATE_HZ;
  const extras: YamCanThreadExtras = {
    ...(options.reconnectIntervalMs !== undefined ? { reconnectIntervalMs: options.reconnectIntervalMs } : {}),
  };
  // Checks the config (ports, transport, numbers) without opening anything.
  createYamCanRig(config, { clock: context.clock, model: context.model }, extras);
  const model = context.model ?? yamRigModel();
  const init: YamRigThreadInit = { config: { ...config }, model, extras };
  return new RigThreadProxy({
    model,
    entry: new URL('./rig-thread-entry.mjs', import.meta.url),
    init,
    rateHz,
    clock: context.clock,
    interlock: context.interlock,
    ...(options.cycleRingCapacity !== undefined ? { cycleRingCapacity: options.cycleRingCapacity } : {}),
  });
}

export function registerYamCanRigs(registry: RigRegistry): RigRegistry {
  return registry.register(
    'yam-can',
    'the two-arm YAM on Damiao motors, one SLCAN or Damiao USB-CAN adapter per arm (in its own rig thread)',
    (config, context) => createThreadedYamCanRig(config, context),
  );
}
