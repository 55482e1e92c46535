/** What emulated YAM motors are doing, read from the motors themselves (for the Rig contract suite's motor probe). */
import { ARM_SIDES, type ArmSide } from '../../src/rig/contract.js';
import type { EmulatedYam } from '../../drivers/emulators/in-process.js';
import { STATUS_ENABLED } from '../../drivers/damiao/protocol.js';
import type { MotorDrive } from '../rig/contract-suite.js';

/** Resolves once every frame the rig sent has reached the emulated motors (or after 200 ms). */
async function delivered(y: EmulatedYam): Promise<void> {
  const end = Date.now() + 200;
  const done = () => ARM_SIDES.every((side) => y.devices[side]!.bus.framesReceived >= y.buses[side]!.stats.framesOut);
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
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
