/**
 * The YAM rig against emulated adapters in this process: the station's embedded default and the fast
 * tests. Everything above the serialport binding is the production code path.
 */
import type { ArmSide, Clock } from '../../src/rig/contract.js';
import { ARM_SIDES } from '../../src/rig/contract.js';
import type { SafetyOptions } from '../../src/rig/safety.js';
import type { CanTransport } from '../can/bus.js';
import { SerialCanBus } from '../can/serial-can-bus.js';
import { VirtualClock } from '../../src/rig/clocks.js';
import { YamCanRig, type YamCanRigOptions } from '../yam/yam-can-rig.js';
import { EmulatedAdapterDevice, EmulatorBinding } from './serial-binding.js';
import { YamBusEmulator, type YamBusEmulatorOptions } from './yam-bus-emulator.js';

export interface EmulatedYamOptions {
  readonly transport?: CanTransport;
  readonly arms?: readonly ArmSide[];
  readonly replyLatencyMs?: number;
  readonly emulator?: YamBusEmulatorOptions | Partial<Record<ArmSide, YamBusEmulatorOptions>>;
  readonly clock?: Clock;
  readonly safety?: SafetyOptions;
  readonly rig?: Partial<YamCanRigOptions>;
}

export interface EmulatedYam {
  readonly rig: YamCanRig;
  readonly binding: EmulatorBinding;
  readonly devices: Partial<Record<ArmSide, EmulatedAdapterDevice>>;
  readonly buses: Partial<Record<ArmSide, SerialCanBus>>;
}

export function emulatedPath(side: ArmSide): string {
  return `/emulated/yam-${side}`;
}

function perArm(o: EmulatedYamOptions['emulator'], side: ArmSide): YamBusEmulatorOptions | undefined {
  if (!o) return undefined;
  if ('left' in o || 'right' in o) return (o as Partial<Record<ArmSide, YamBusEmulatorOptions>>)[side];
  return o as YamBusEmulatorOptions;
}

export function createEmulatedYam(options: EmulatedYamOptions = {}): EmulatedYam {
  const transport = options.transport ?? 'slcan';
  const binding = new EmulatorBinding();
  const devices: Partial<Record<ArmSide, EmulatedAdapterDevice>> = {};
  const buses: Partial<Record<ArmSide, SerialCanBus>> = {};
  const clock = options.clock ?? options.rig?.clock;
  // The motors read the rig's clock (a world they move must read the same one); on virtual time an
  // adapter's latency waits on it without moving it.
  const virtual = clock instanceof VirtualClock ? clock : undefined;
  for (const side of options.arms ?? ARM_SIDES) {
    const emulator = perArm(options.emulator, side);
    const bus = new YamBusEmulator(clock ? { nowS: () => clock.nowS(), ...emulator } : emulator);
    devices[side] = binding.add(
      new EmulatedAdapterDevice(emulatedPath(side), transport, bus, {
        replyLatencyMs: options.replyLatencyMs,
        timer: virtual?.passiveTimer,
      }),
    );
    buses[side] = new SerialCanBus({ transport, path: emulatedPath(side), binding, reconnectIntervalMs: 50 });
  }
  // The lumped emulator's motors carry no arm (gravity off by default): a gravity feed-forward
  // would push them, so none unless asked for. The emulated cell, whose arms weigh, asks.
  const rig = new YamCanRig({
    feedForward: false,
    ...options.rig,
    buses,
    clock,
    safety: options.safety ?? options.rig?.safety,
  });
  return { rig, binding, devices, buses };
}
