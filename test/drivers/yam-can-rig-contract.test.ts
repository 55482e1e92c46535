// The shared Rig contract suite against YamCanRig on the byte-level emulator (in-process serialport
// binding), once per adapter framing. Real time: the emulator's motors move in wall-clock time.
import { RealtimeClock } from '../../src/rig/clocks.js';
import { describeRigContract, tickThrough } from '../rig/contract-suite.js';
import { createEmulatedYam } from '../../drivers/emulators/in-process.js';
import type { CanTransport } from '../../drivers/can/bus.js';

for (const transport of ['slcan', 'damiao'] as CanTransport[]) {
  describeRigContract(`YamCanRig over ${transport} on the emulator`, async () => {
    const clock = new RealtimeClock();
    const { rig, devices } = createEmulatedYam({ transport, clock });
    return {
      rig,
      clock,
      advance: (seconds: number) => tickThrough(rig, clock, seconds),
      dispose: async () => {
        await rig.close();
        for (const d of Object.values(devices)) d?.adapter.dispose();
      },
    };
  });
}
