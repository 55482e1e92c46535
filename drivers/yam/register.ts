/**
 * Registry entries for the YAM over CAN, for the composition root (src/app) to add:
 *   {type: 'yam-can', transport: 'slcan'|'damiao', ports: {left?: PATH, right?: PATH}, baudRate?, replyDeadlineMs?,
 *    gripperLimits?: {left?: {closedRad, openRad}, right?: …}}
 * The emulated rigs (the station's embedded default) are registered from src/emulated-cell, so this
 * folder never ships its stand-in. The rig is returned configured-but-closed: the station calls
 * configure() and activate().
 */
import { ARM_SIDES, RigError, type ArmSide } from '../../src/rig/contract.js';
import type { RigConfig, RigContext, RigRegistry } from '../../src/rig/registry.js';
import { CAN_TRANSPORTS, type CanTransport } from '../can/bus.js';
import { SerialCanBus } from '../can/serial-can-bus.js';
import { YamCanRig, type GripperLimits } from './yam-can-rig.js';

/** A rig config value the factory cannot use: one sentence, as a config-mismatch RigError. */
export function rigConfigError(message: string): RigError {
  return new RigError(message, { kind: 'config-mismatch', message });
}

/** The config's 'transport' (slcan or damiao), or `fallback` when it names none. */
export function transportOf(config: RigConfig, fallback?: CanTransport): CanTransport {
  const t = config.transport ?? fallback;
  if (typeof t !== 'string' || !(CAN_TRANSPORTS as readonly string[]).includes(t)) {
    throw rigConfigError(`The ${config.type} rig config needs 'transport' set to ${CAN_TRANSPORTS.join(' or ')}, not ${JSON.stringify(t)}.`);
  }
  return t as CanTransport;
}

/** An optional number within [min, max] from the config, or one sentence. */
export function optionalNumber(config: RigConfig, key: string, min: number, max: number): number | undefined {
  const v = config[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw rigConfigError(`The ${config.type} rig config's '${key}' must be a number from ${min} to ${max}, not ${JSON.stringify(v)}.`);
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
    if (typeof v.closedRad !== 'number' || typeof v.openRad !== 'number' || !Number.isFinite(v.closedRad) || !Number.isFinite(v.openRad) || Math.abs(v.openRad - v.closedRad) < 1) {
      throw rigConfigError(`The ${config.type} rig config's gripperLimits.${side} needs closedRad and openRad at least 1 rad apart (from 'tandem rig calibrate-gripper').`);
    }
    out[side] = { closedRad: v.closedRad, openRad: v.openRad };
  }
  return out;
}

export function createYamCanRig(config: RigConfig, context: RigContext): YamCanRig {
  const transport = transportOf(config);
  const ports = config.ports;
  if (ports === null || typeof ports !== 'object') throw rigConfigError(`The yam-can rig config needs 'ports', e.g. {"left": "/dev/ttyACM0", "right": "/dev/ttyACM1"}.`);
  const buses: Partial<Record<ArmSide, SerialCanBus>> = {};
  for (const side of ARM_SIDES) {
    const p = (ports as Record<string, unknown>)[side];
    if (p === undefined) continue;
    if (typeof p !== 'string' || p.length === 0) throw rigConfigError(`The yam-can rig config's ports.${side} must be a serial device path.`);
    buses[side] = new SerialCanBus({ transport, path: p, baudRate: optionalNumber(config, 'baudRate', 9600, 12_000_000) });
  }
  if (!buses.left && !buses.right) throw rigConfigError(`The yam-can rig config's 'ports' names no arm; give ports.left and/or ports.right.`);
  return new YamCanRig({ buses, model: context.model, clock: context.clock, safety: { interlock: context.interlock }, replyDeadlineMs: optionalNumber(config, 'replyDeadlineMs', 5, 350), gripperLimits: gripperLimitsOf(config) });
}

export function registerYamCanRigs(registry: RigRegistry): RigRegistry {
  return registry
    .register('yam-can', 'the two-arm YAM on Damiao motors, one SLCAN or Damiao USB-CAN adapter per arm', createYamCanRig);
}
