// The shared Rig contract suite against YamCanRig on the byte-level emulator (in-process serialport
// binding), once per adapter framing, on virtual time with the production 100 ms reply deadline
// (the wall-clock driver over ptys: test/drivers/rig-cli-pty.rt.test.ts).
// The motor probe reads what the emulated motors hold: enabled or not, and the gain in force.
import { VirtualClock } from '../../src/rig/clocks.js';
import type { ArmSide } from '../../src/rig/contract.js';
import { describeRigContract, tickThrough } from '../rig/contract-suite.js';
import { emulatedMotorDrives } from '../helpers/emulated-yam.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import type { CanTransport } from '../../drivers/can/bus.js';

for (const transport of ['slcan', 'damiao'] as CanTransport[]) {
  describeRigContract(`YamCanRig over ${transport} on the emulator`, async () => {
    const clock = new VirtualClock();
    const y = createEmulatedYam({ transport, clock });
    return {
      rig: y.rig,
      clock,
      advance: (seconds: number) => tickThrough(y.rig, clock, seconds),
      dispose: async () => {
        await y.rig.close();
        for (const d of Object.values(y.devices)) d?.adapter.dispose();
      },
      motors: () => emulatedMotorDrives(y),
      // Over-current on joint 3; the rig clears it itself on activate() (clear-error round).
      injectFault: (side: ArmSide) => y.devices[side]!.bus.inject({ kind: 'status', motor: 3, status: 0xa }),
    };
  });
}
