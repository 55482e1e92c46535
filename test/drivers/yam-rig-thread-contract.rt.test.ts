// The shared Rig contract suite against the station's 'yam-can' rig as it runs: YamCanRig, its
// safety supervisor and the motor loop in the rig thread, the main thread holding the proxy —
// over socat ptys to emulated arms in a thread of their own. Real time; the reply deadline is
// widened as in the in-process suite (a loaded 2-core machine, not the contract, is what it covers).
import { after, before } from 'node:test';
import { RealtimeClock } from '../../src/rig/clocks.js';
import type { ArmSide } from '../../src/rig/contract.js';
import { describeRigContract } from '../rig/contract-suite.js';
import { createThreadedYamCanRig } from '../../drivers/yam/register.js';
import { startEmulatorThread, type EmulatorThread } from '../helpers/emulator-thread.js';

let emu: EmulatorThread;
before(async () => {
  emu = await startEmulatorThread();
});
after(async () => {
  await emu.stop();
});

describeRigContract('YamCanRig in its rig thread, over socat ptys', async () => {
  await emu.reset();
  const clock = new RealtimeClock();
  const rig = createThreadedYamCanRig(
    { type: 'yam-can', transport: 'slcan', ports: emu.links, replyDeadlineMs: 350 },
    { clock },
  );
  return {
    rig,
    clock,
    // The rig thread ticks itself every cycle: let the time pass, then wait (at most 1 s) until the
    // rig thread has ticked past it — a loaded machine may run it a few milliseconds late.
    advance: async (seconds: number) => {
      const target = clock.nowS() + seconds;
      await clock.waitUntil(target);
      const end = target + 1;
      while (rig.read().timeS < target && clock.nowS() < end) await new Promise((r) => setTimeout(r, 1));
    },
    dispose: () => rig.close(),
    motors: () => emu.drives(rig.framesOut()),
    // Over-current on joint 3; the rig clears it itself on activate() (clear-error round).
    injectFault: (side: ArmSide) => void emu.inject(side, { kind: 'status', motor: 3, status: 0xa }),
  };
});
