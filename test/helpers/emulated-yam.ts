/**
 * Test helpers for YamCanRig on the byte-level emulator: a rig that is always closed afterwards,
 * and what the emulated motors are doing, read from the motors themselves (the Rig contract
 * suite's motor probe).
 */
import { ARM_SIDES, type ArmSide } from '../../src/rig/contract.js';
import { createEmulatedYam, type EmulatedYam, type EmulatedYamOptions } from '../../drivers/emulators/in-process.js';
import { STATUS_ENABLED } from '../../drivers/damiao/protocol.js';
import type { MotorDrive } from '../rig/contract-suite.js';

/** A bound on waiting for bytes, not a deadline under test: generous, as a busy machine may hold them up. */
const DELIVERY_BOUND_MS = 2000;

/** Resolves once every frame the rig sent has reached the emulated motors; throws, saying so, if they never do. */
async function delivered(y: EmulatedYam): Promise<void> {
  const end = Date.now() + DELIVERY_BOUND_MS;
  const done = () => ARM_SIDES.every((side) => y.devices[side]!.bus.framesReceived >= y.buses[side]!.stats.framesOut);
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
  if (!done())
    throw new Error(
      `frames sent by the rig had not reached the emulated motors after ${DELIVERY_BOUND_MS} ms (${ARM_SIDES.map((s) => `${s} ${y.devices[s]!.bus.framesReceived}/${y.buses[s]!.stats.framesOut}`).join(', ')})`,
    );
}

export async function emulatedMotorDrives(y: EmulatedYam): Promise<Record<ArmSide, MotorDrive>> {
  await delivered(y);
  const of = (side: ArmSide): MotorDrive => {
    const motors = [...y.devices[side]!.bus.motors.values()].filter((m) => m.status === STATUS_ENABLED);
    if (motors.length === 0 || motors.every((m) => m.lastCommand.kp === 0 && m.lastCommand.kd === 0)) return 'off';
    return motors.some((m) => m.lastCommand.kp > 0) ? 'stiff' : 'damp';
  };
  return { left: of('left'), right: of('right') };
}

/** An emulated YAM for `fn`, its buses closed and its adapters disposed afterwards, whatever happens. */
export async function withEmulatedRig(
  options: EmulatedYamOptions,
  fn: (y: EmulatedYam) => Promise<void>,
): Promise<void> {
  const y = createEmulatedYam(options);
  try {
    await fn(y);
  } finally {
    await y.rig.close();
    for (const d of Object.values(y.devices)) d?.adapter.dispose();
  }
}

/** The same, configured and activated, its start-up safety events drained. */
export async function withActiveEmulatedRig(
  options: EmulatedYamOptions,
  fn: (y: EmulatedYam) => Promise<void>,
): Promise<void> {
  await withEmulatedRig(options, async (y) => {
    await y.rig.configure();
    await y.rig.activate();
    y.rig.takeSafetyEvents();
    await fn(y);
  });
}
